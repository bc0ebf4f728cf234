package dev.sluice.sender;

import dev.sluice.avro.DeliveryResult;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Looks for a result in the partition of {@code delivery.results} its key maps to (the producer's default
 * partitioner: murmur2 of the key), from a little before the time it could have been written to the end.
 * Bounded: only records written since then are read, and only after a crash left a mark behind. One assigned
 * consumer, no group; thread-safe by synchronisation (rare calls).
 */
final class KafkaResultLookup implements ResultLookup {
    private static final Logger log = LoggerFactory.getLogger(KafkaResultLookup.class);
    private static final long MARGIN_MS = 10_000;
    private static final int MAX_RECORDS = 200_000;

    private final String topic;
    private final Map<String, Object> properties;
    private final Deserializer<DeliveryResult> deserializer;
    private KafkaConsumer<String, DeliveryResult> consumer;

    KafkaResultLookup(String topic, Map<String, Object> properties, Deserializer<DeliveryResult> deserializer) {
        this.topic = topic;
        this.properties = new HashMap<>(properties);
        this.properties.remove(ConsumerConfig.GROUP_ID_CONFIG);
        this.properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        this.properties.put(ConsumerConfig.CLIENT_ID_CONFIG, properties.get(ConsumerConfig.CLIENT_ID_CONFIG) + "-lookup");
        this.deserializer = deserializer;
    }

    @Override
    public synchronized boolean hasResult(String resultKey, String messageId, long sinceMs) {
        if (resultKey == null) {
            return false;
        }
        try {
            if (consumer == null) {
                consumer = new KafkaConsumer<>(properties, new StringDeserializer(), deserializer);
            }
            int partitions = consumer.partitionsFor(topic).size();
            int p = Utils.toPositive(Utils.murmur2(resultKey.getBytes(StandardCharsets.UTF_8))) % partitions;
            TopicPartition tp = new TopicPartition(topic, p);
            consumer.assign(List.of(tp));
            long from = Math.max(0, sinceMs - MARGIN_MS);
            OffsetAndTimestamp start = consumer.offsetsForTimes(Map.of(tp, from)).get(tp);
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            if (start == null) {
                return false; // nothing written since then
            }
            consumer.seek(tp, start.offset());
            int read = 0;
            while (consumer.position(tp) < end && read < MAX_RECORDS) {
                for (ConsumerRecord<String, DeliveryResult> r : consumer.poll(Duration.ofMillis(200))) {
                    read++;
                    if (resultKey.equals(r.key()) && r.value() != null && messageId.equals(r.value().getMessageId())) {
                        return true;
                    }
                }
            }
            return false;
        } catch (RuntimeException e) {
            log.warn("could not look for the result of {} ({}); writing it", messageId, e.toString());
            return false;
        }
    }

    @Override
    public synchronized void close() {
        if (consumer != null) {
            consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(2)));
        }
    }
}
