package dev.sluice.sender;

import java.util.HashSet;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;

/**
 * Which assigned partitions the outbox consumer pauses, from three independent reasons, so that one never resumes
 * a partition another still holds:
 * <ul>
 * <li>the global buffer bound: at the high-water mark of buffered records (lanes plus results waiting to be
 *     written) every assigned partition pauses, until the low-water mark (hysteresis);</li>
 * <li>an unreadable record waiting for its next read ({@link UnreadableRecords}): its partition;</li>
 * <li>deferred offsets at their cap ({@link DeferredRecords#toPause}): the partitions holding them.</li>
 * </ul>
 * Pure decision, no consumer: {@link #decide} returns what to pause and resume given what is paused now.
 *
 * <p>Thread: only the sender's poll thread.
 */
final class PartitionPauses {
    private final int highWater;
    private final int lowWater;
    private boolean full;
    private boolean deferredAtCap;

    /**
     * What to change: partitions to pause and to resume; whether the global pause began or ended now, and whether
     * the deferred offsets reached their cap now (each counted once as a backpressure pause).
     */
    record Change(Set<TopicPartition> pause, Set<TopicPartition> resume, boolean fullBegan, boolean fullEnded,
                  boolean deferredCapBegan) {
    }

    PartitionPauses(int highWater, int lowWater) {
        if (lowWater > highWater) {
            throw new IllegalArgumentException("low-water " + lowWater + " above high-water " + highWater);
        }
        this.highWater = highWater;
        this.lowWater = lowWater;
    }

    /**
     * @param assignment     the partitions assigned now
     * @param pausedNow      the partitions paused now
     * @param buffered       records in lanes plus results waiting to be written
     * @param heldUnreadable partitions holding a record to read again later
     * @param deferredAtCap  partitions to pause because the deferred offsets are at their cap
     */
    Change decide(Set<TopicPartition> assignment, Set<TopicPartition> pausedNow, int buffered,
                  Set<TopicPartition> heldUnreadable, Set<TopicPartition> deferredAtCap) {
        boolean wasFull = full;
        if (buffered >= highWater) {
            full = true;
        } else if (full && buffered <= lowWater) {
            full = false;
        }
        boolean capBegan = !deferredAtCap.isEmpty() && !this.deferredAtCap;
        this.deferredAtCap = !deferredAtCap.isEmpty();
        Set<TopicPartition> want = new HashSet<>(full ? assignment : Set.of());
        want.addAll(heldUnreadable);
        want.addAll(deferredAtCap);
        want.retainAll(assignment);
        Set<TopicPartition> resume = new HashSet<>(pausedNow);
        resume.removeAll(want);
        want.removeAll(pausedNow);
        return new Change(want, resume, full && !wasFull, wasFull && !full, capBegan);
    }
}
