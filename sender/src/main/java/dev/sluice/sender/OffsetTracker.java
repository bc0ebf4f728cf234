package dev.sluice.sender;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Which offsets may be committed: per partition, the lowest offset that has no result yet, or the last
 * seen offset + 1 when every record has its result. Committing past a record without a result would lose
 * it on a crash; committing less only causes redelivery. Thread-safe.
 */
public final class OffsetTracker {

    private static final class PartitionState {
        final TreeSet<Long> pending = new TreeSet<>();
        long nextOffset = -1;
        long committed = -1;
    }

    private final Map<TopicPartition, PartitionState> partitions = new HashMap<>();

    /** A record was received and waits for its result. */
    public synchronized void received(TopicPartition tp, long offset) {
        PartitionState s = partitions.computeIfAbsent(tp, k -> new PartitionState());
        s.pending.add(offset);
        s.nextOffset = Math.max(s.nextOffset, offset + 1);
    }

    /** The record's result was written (acknowledged by Kafka). Unknown partitions are ignored (revoked). */
    public synchronized void done(TopicPartition tp, long offset) {
        PartitionState s = partitions.get(tp);
        if (s != null) {
            s.pending.remove(offset);
        }
    }

    /** Records of this partition still without a result. */
    public synchronized int pending(TopicPartition tp) {
        PartitionState s = partitions.get(tp);
        return s == null ? 0 : s.pending.size();
    }

    /** The committable offset of a partition, or -1 when nothing was received. */
    public synchronized long committable(TopicPartition tp) {
        PartitionState s = partitions.get(tp);
        if (s == null || s.nextOffset < 0) {
            return -1;
        }
        return s.pending.isEmpty() ? s.nextOffset : s.pending.first();
    }

    /** Offsets to commit that moved since the last {@link #markCommitted}. */
    public synchronized Map<TopicPartition, OffsetAndMetadata> toCommit() {
        Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>();
        partitions.forEach((tp, s) -> {
            long c = committableOf(s);
            if (c > s.committed) {
                out.put(tp, new OffsetAndMetadata(c));
            }
        });
        return out;
    }

    /** Records that these offsets were committed. */
    public synchronized void markCommitted(Map<TopicPartition, OffsetAndMetadata> offsets) {
        offsets.forEach((tp, o) -> {
            PartitionState s = partitions.get(tp);
            if (s != null) {
                s.committed = Math.max(s.committed, o.offset());
            }
        });
    }

    /** Forgets a partition (revoked or lost). */
    public synchronized void remove(TopicPartition tp) {
        partitions.remove(tp);
    }

    private static long committableOf(PartitionState s) {
        if (s.nextOffset < 0) {
            return -1;
        }
        return s.pending.isEmpty() ? s.nextOffset : s.pending.first();
    }
}
