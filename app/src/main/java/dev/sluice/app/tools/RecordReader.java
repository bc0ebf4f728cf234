package dev.sluice.app.tools;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads several topics from {@code since} (by record timestamp) or their beginning, without a consumer group:
 * up to the end offsets taken at start, or with {@code follow} on until {@code stop} says so. Records stay raw bytes
 * for the caller to decode. All state lives on the calling thread.
 */
final class RecordReader {
    private static final Duration POLL = Duration.ofMillis(500);
    /** Without follow: give up when no record and no end is reached for this long (the broker went away). */
    static final Duration STALL = Duration.ofSeconds(30);
    /** With follow: after this long without a record, ask the broker for the end offsets, so a lost broker is noticed. */
    static final Duration FOLLOW_CHECK = Duration.ofSeconds(10);

    private RecordReader() {
    }

    /**
     * @param caughtUp runs once, with follow, when every partition has reached the end offsets taken at start
     */
    static long read(Map<String, Object> readerProps, List<String> topics, Instant since, boolean follow, BooleanSupplier stop,
                     Runnable caughtUp, Consumer<ConsumerRecord<byte[], byte[]>> each) {
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(readerProps, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> parts = new ArrayList<>();
            for (String topic : topics) {
                List<PartitionInfo> infos = consumer.partitionsFor(topic, Reachability.TIMEOUT);
                if (infos == null || infos.isEmpty()) {
                    throw new ToolException("topic " + topic + " not found (or has no partitions)");
                }
                infos.forEach(i -> parts.add(new TopicPartition(topic, i.partition())));
            }
            consumer.assign(parts);
            Map<TopicPartition, Long> end = consumer.endOffsets(parts, Reachability.TIMEOUT);
            Map<TopicPartition, Long> start = new HashMap<>(consumer.beginningOffsets(parts, Reachability.TIMEOUT));
            if (since != null) {
                Map<TopicPartition, Long> query = new HashMap<>();
                parts.forEach(p -> query.put(p, since.toEpochMilli()));
                Map<TopicPartition, OffsetAndTimestamp> found = consumer.offsetsForTimes(query, Reachability.TIMEOUT);
                parts.forEach(p -> start.put(p, found.get(p) == null ? end.get(p) : found.get(p).offset()));
            }
            parts.forEach(p -> consumer.seek(p, start.get(p)));
            long read = 0;
            long lastProgress = System.nanoTime();
            boolean announced = false;
            while (!stop.getAsBoolean()) {
                int got = 0;
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(POLL)) {
                    got++;
                    read++;
                    each.accept(r);
                }
                if (follow) {
                    if (!announced && parts.stream().allMatch(p -> consumer.position(p) >= end.get(p))) {
                        announced = true;
                        caughtUp.run();
                    }
                    if (got > 0) {
                        lastProgress = System.nanoTime();
                    } else if (System.nanoTime() - lastProgress > FOLLOW_CHECK.toNanos()) {
                        try {
                            consumer.endOffsets(parts, Reachability.TIMEOUT);
                        } catch (org.apache.kafka.common.errors.TimeoutException e) {
                            throw new ToolException("lost Kafka at " + readerProps.get("bootstrap.servers")
                                    + " (bootstrap.servers): no answer for " + Reachability.TIMEOUT.toSeconds() + " s", e);
                        }
                        lastProgress = System.nanoTime();
                    }
                    continue;
                }
                boolean done = true;
                for (TopicPartition p : parts) {
                    // position() passes transaction markers too, which are never handed out as records
                    if (consumer.position(p) < end.get(p)) {
                        done = false;
                        break;
                    }
                }
                if (done) {
                    break;
                }
                if (got > 0) {
                    lastProgress = System.nanoTime();
                } else if (System.nanoTime() - lastProgress > STALL.toNanos()) {
                    throw new ToolException("reading " + String.join(", ", topics) + " made no progress for " + STALL.toSeconds() + " s");
                }
            }
            return read;
        }
    }
}
