package dev.sluice.sender;

import java.util.Objects;
import org.apache.kafka.common.TopicPartition;

/**
 * Identifies one per-chat FIFO lane: a chat inside the partition that owns it. The same chat read from
 * {@code outbox.live} and {@code outbox.backfill} has two lanes (different partitions).
 */
public record LaneKey(TopicPartition partition, String chatId) {
    public LaneKey {
        Objects.requireNonNull(partition, "partition");
        Objects.requireNonNull(chatId, "chatId");
    }

    // written out: a record's generated equals and hashCode go through method handles, a frame of their own in a
    // sender's profile (issue 19: every message looks its lane up by this key)
    @Override
    public boolean equals(Object o) {
        return o == this || o instanceof LaneKey k && chatId.equals(k.chatId) && partition.equals(k.partition);
    }

    @Override
    public int hashCode() {
        return 31 * partition.hashCode() + chatId.hashCode();
    }
}
