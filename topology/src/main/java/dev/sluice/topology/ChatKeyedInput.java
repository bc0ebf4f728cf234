package dev.sluice.topology;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import org.apache.kafka.common.utils.Utils;

/**
 * Decides, per source record, whether a valid notification may skip the {@code by-chat} repartition: the
 * producer already keyed it by its normalised chat id and it sits in the partition the repartition would
 * have written it to ({@code murmur2(key) % partitions}, the Kafka producer's and Kafka Streams' default
 * partitioner on the UTF-8 key). Such a record is already where all the chat's state lives, so routing it
 * in the task that read it is the same as routing it after the repartition, one exactly-once hop sooner.
 * Any other record (no key, another key, an un-normalised chat id, a custom partitioner, or a partition count
 * not known yet) still takes the repartition, so it reaches the chat's partition as before.
 *
 * <p>The partition counts of the source topics are set by {@link TopologyService#start()} (read with the
 * co-partitioning check) before any stream thread runs; until then, and in a topology built without a
 * runner, every record takes the repartition. Written once by the starting thread, read by the stream
 * threads (a volatile immutable map).
 */
public final class ChatKeyedInput {
    private volatile Map<String, Integer> partitionsByTopic;

    private ChatKeyedInput(Map<String, Integer> partitionsByTopic) {
        this.partitionsByTopic = partitionsByTopic;
    }

    /** Partition counts unknown until {@link #partitions(Map)}: every record takes the repartition. */
    public static ChatKeyedInput unknown() {
        return new ChatKeyedInput(Map.of());
    }

    /** Records the partition count of each source topic (a topic left out takes the repartition for every record). */
    public void partitions(Map<String, Integer> partitionsByTopic) {
        this.partitionsByTopic = Map.copyOf(partitionsByTopic);
    }

    /**
     * @param topic         the record's source topic
     * @param partition     the record's source partition
     * @param key           the record's key bytes as produced (may be null)
     * @param normalisedChat the notification's chat id after {@link dev.sluice.chat.ChatIds#normalise}
     * @return true when the record is keyed by {@code normalisedChat} and sits in that key's partition
     */
    boolean onChatPartition(String topic, int partition, byte[] key, String normalisedChat) {
        Integer partitions = partitionsByTopic.get(topic);
        if (partitions == null || partitions < 1 || key == null || partition < 0 || normalisedChat == null) {
            return false;
        }
        return Arrays.equals(key, normalisedChat.getBytes(StandardCharsets.UTF_8))
                && Utils.toPositive(Utils.murmur2(key)) % partitions == partition;
    }
}
