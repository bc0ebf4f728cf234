package dev.sluice.sender;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Which offsets may be committed: per partition, the lowest offset that has no result yet, or the last
 * seen offset + 1 when every record has its result. Committing past a record without a result would lose
 * it on a crash; committing less only causes redelivery.
 *
 * <p>Chats finish out of order, so records above the committed offset may already have their result. The
 * commit's metadata lists them ({@code sluice-done:<from>-<to>,<offset>,...}, absolute offsets, at most
 * {@value #MAX_METADATA_CHARS} characters), and the next owner of the partition skips them instead of
 * sending them again ({@link #skipAlreadyDone}). Thread-safe.
 */
public final class OffsetTracker {
    static final String METADATA_PREFIX = "sluice-done:";
    /** Below Kafka's default {@code offset.metadata.max.bytes} (4096); what does not fit is redelivered. */
    static final int MAX_METADATA_CHARS = 3000;

    private static final class PartitionState {
        final PendingOffsets pending = new PendingOffsets();
        final Set<Long> alreadyDone = new HashSet<>();
        long nextOffset = -1;
        long committed = -1;
        String committedMetadata = "";
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

    /**
     * Reads the committed metadata of a partition this instance was just assigned: records listed there
     * already have their result (written by the previous owner).
     */
    public synchronized void skipAlreadyDone(TopicPartition tp, OffsetAndMetadata committed) {
        if (committed == null || committed.metadata() == null || !committed.metadata().startsWith(METADATA_PREFIX)) {
            return;
        }
        PartitionState s = partitions.computeIfAbsent(tp, k -> new PartitionState());
        s.committed = committed.offset();
        s.committedMetadata = committed.metadata();
        String body = committed.metadata().substring(METADATA_PREFIX.length());
        if (body.isEmpty()) {
            return;
        }
        try {
            for (String part : body.split(",")) {
                int dash = part.indexOf('-');
                long from = Long.parseLong(dash < 0 ? part : part.substring(0, dash));
                long to = dash < 0 ? from : Long.parseLong(part.substring(dash + 1));
                for (long o = from; o <= to && s.alreadyDone.size() < 1_000_000; o++) {
                    s.alreadyDone.add(o);
                }
            }
        } catch (NumberFormatException e) {
            s.alreadyDone.clear(); // unreadable: redeliver rather than skip wrongly
        }
    }

    /** True if the previous owner already wrote this record's result: do not send it again. */
    public synchronized boolean isAlreadyDone(TopicPartition tp, long offset) {
        PartitionState s = partitions.get(tp);
        return s != null && s.alreadyDone.remove(offset);
    }

    /** The committable offset of a partition, or -1 when nothing was received. */
    public synchronized long committable(TopicPartition tp) {
        PartitionState s = partitions.get(tp);
        return s == null ? -1 : committableOf(s);
    }

    /** Offsets (with the done-above metadata) that changed since the last {@link #markCommitted}. */
    public synchronized Map<TopicPartition, OffsetAndMetadata> toCommit() {
        Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>();
        partitions.forEach((tp, s) -> {
            long c = committableOf(s);
            if (c < 0) {
                return;
            }
            String metadata = doneAbove(s, c);
            if (c > s.committed || (c == s.committed && !metadata.equals(s.committedMetadata))) {
                out.put(tp, new OffsetAndMetadata(c, metadata));
            }
        });
        return out;
    }

    /**
     * The committable offset (with its done-above metadata) of one of {@code assigned} that received records, changed
     * or not: an idempotent commit that proves the group still counts this member ({@code PollLease}); empty if none.
     */
    public synchronized Map<TopicPartition, OffsetAndMetadata> current(java.util.Set<TopicPartition> assigned) {
        for (TopicPartition tp : assigned) {
            PartitionState s = partitions.get(tp);
            long c = s == null ? -1 : committableOf(s);
            if (c >= 0) {
                return Map.of(tp, new OffsetAndMetadata(c, doneAbove(s, c)));
            }
        }
        return Map.of();
    }

    /** Records that these offsets were committed. */
    public synchronized void markCommitted(Map<TopicPartition, OffsetAndMetadata> offsets) {
        offsets.forEach((tp, o) -> {
            PartitionState s = partitions.get(tp);
            if (s != null && o.offset() >= s.committed) {
                s.committed = o.offset();
                s.committedMetadata = o.metadata();
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

    /** Ranges of offsets in [from, nextOffset) that are not pending, i.e. have their result. */
    private static String doneAbove(PartitionState s, long from) {
        StringBuilder sb = new StringBuilder(METADATA_PREFIX);
        long cursor = from;
        for (long p = s.pending.nextAtOrAfter(from); p >= 0; p = s.pending.nextAtOrAfter(p + 1)) {
            if (!appendRange(sb, cursor, p - 1)) {
                return sb.toString();
            }
            cursor = p + 1;
        }
        appendRange(sb, cursor, s.nextOffset - 1);
        return sb.toString();
    }

    private static boolean appendRange(StringBuilder sb, long from, long to) {
        if (from > to) {
            return true;
        }
        String range = from == to ? Long.toString(from) : from + "-" + to;
        if (sb.length() + range.length() + 1 > MAX_METADATA_CHARS) {
            return false;
        }
        if (sb.length() > METADATA_PREFIX.length()) {
            sb.append(',');
        }
        sb.append(range);
        return true;
    }
}
