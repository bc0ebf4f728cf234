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
}
