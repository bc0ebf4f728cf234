package dev.sluice.app.tools;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads a topic once, from the first record at or after {@code since} (by record timestamp, via
 * {@code offsetsForTimes}) up to the end offsets taken when the scan starts, so it ends even while producers
 * keep writing. No consumer group, nothing committed. Records stay raw bytes: the caller decodes, so one
 * undecodable record is counted instead of stopping the scan. Order is per partition, as Kafka keeps it.
 */
final class TopicScan {
    private static final Duration POLL = Duration.ofMillis(500);
    private static final Duration STALL = Duration.ofSeconds(60);

    private TopicScan() {
    }

    /**
     * @param since first record timestamp to read (inclusive), or null for the beginning
     * @param until record timestamp to stop at (exclusive), or null for the end offsets at start
     * @return records read (handed to {@code each})
     * @throws IllegalArgumentException when the topic does not exist
     * @throws IllegalStateException when no progress is made for a minute (broker unreachable)
     */
    static long scan(Map<String, Object> readerProps, String topic, Instant since, Instant until, Progress progress,
                     Consumer<ConsumerRecord<byte[], byte[]>> each) {
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(readerProps, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(30));
            if (infos == null || infos.isEmpty()) {
                throw new IllegalArgumentException("topic '" + topic + "' does not exist (or has no partitions)");
            }
            List<TopicPartition> parts = new ArrayList<>();
            infos.forEach(i -> parts.add(new TopicPartition(topic, i.partition())));
            consumer.assign(parts);
            Map<TopicPartition, Long> end = consumer.endOffsets(parts);
            Map<TopicPartition, Long> start = new HashMap<>(consumer.beginningOffsets(parts));
            if (since != null) {
                Map<TopicPartition, Long> query = new HashMap<>();
                parts.forEach(p -> query.put(p, since.toEpochMilli()));
                Map<TopicPartition, OffsetAndTimestamp> found = consumer.offsetsForTimes(query);
                parts.forEach(p -> start.put(p, found.get(p) == null ? end.get(p) : found.get(p).offset()));
            }
            long expected = 0;
            List<TopicPartition> open = new ArrayList<>();
            for (TopicPartition p : parts) {
                consumer.seek(p, start.get(p));
                if (start.get(p) < end.get(p)) {
                    open.add(p);
                    expected += end.get(p) - start.get(p);
                }
            }
            progress.max(expected);
            consumer.pause(parts);
            consumer.resume(open);
            long read = 0;
            long lastProgress = System.nanoTime();
            while (!open.isEmpty()) {
                long before = read;
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(POLL)) {
                    TopicPartition p = new TopicPartition(r.topic(), r.partition());
                    if (r.offset() >= end.get(p)) {
                        continue;
                    }
                    read++;
                    progress.step(1);
                    if (until == null || r.timestamp() < until.toEpochMilli()) {
                        each.accept(r);
                    }
                }
                for (var it = open.iterator(); it.hasNext(); ) {
                    TopicPartition p = it.next();
                    // position() passes transaction markers too, which are never handed out as records
                    if (consumer.position(p) >= end.get(p)) {
                        consumer.pause(List.of(p));
                        it.remove();
                        lastProgress = System.nanoTime();
                    }
                }
                if (read > before) {
                    lastProgress = System.nanoTime();
                } else if (System.nanoTime() - lastProgress > STALL.toNanos()) {
                    throw new IllegalStateException("reading " + topic + " made no progress for " + STALL.toSeconds()
                            + " s; partitions left: " + open);
                }
            }
            return read;
        }
    }
}
