package dev.sluice.app.demo;

import dev.sluice.avro.DeliveryResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads {@code delivery.results} and the dead-letter topic from the beginning (read_committed, so only
 * what the topology committed counts) and keeps what the report needs.
 */
public final class ResultCollector implements AutoCloseable {
    private final KafkaConsumer<String, byte[]> consumer;
    private final Deserializer<DeliveryResult> results;
    private final String resultsTopic;
    private final String dlqTopic;
    private final List<DeliveryResult> collected = new ArrayList<>();
    private final Set<String> deadLetteredIds = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Thread thread;
    private volatile RuntimeException failure;

    public ResultCollector(String bootstrapServers, Deserializer<DeliveryResult> results, String resultsTopic, String dlqTopic) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "sluice-demo-report");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        this.consumer = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer());
        this.results = results;
        this.resultsTopic = resultsTopic;
        this.dlqTopic = dlqTopic;
        this.thread = new Thread(this::loop, "demo-result-collector");
        this.thread.setDaemon(true);
    }

    public void start() {
        consumer.subscribe(List.of(resultsTopic, dlqTopic));
        thread.start();
    }

    private void loop() {
        try {
            while (running.get()) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (r.topic().equals(resultsTopic)) {
                        DeliveryResult result = results.deserialize(r.topic(), r.headers(), r.value());
                        synchronized (collected) {
                            collected.add(result);
                        }
                    } else {
                        deadLetteredIds.add(dlqNotificationId(r));
                    }
                }
            }
        } catch (org.apache.kafka.common.errors.WakeupException e) {
            // closing
        } catch (RuntimeException e) {
            failure = e;
        }
    }

    /** The demo writes valid Avro only; a dead letter is identified by its key and offset. */
    private static String dlqNotificationId(ConsumerRecord<String, byte[]> r) {
        Header id = r.headers().lastHeader("sluice.notification.id");
        return id != null ? new String(id.value(), java.nio.charset.StandardCharsets.UTF_8) : r.topic() + "@" + r.offset();
    }

    public List<DeliveryResult> results() {
        throwIfFailed();
        synchronized (collected) {
            return List.copyOf(collected);
        }
    }

    public int resultCount() {
        throwIfFailed();
        synchronized (collected) {
            return collected.size();
        }
    }

    /** Notifications settled so far: one per single result, the folded ids of a digest's result, dead letters. */
    public long settledNotifications() {
        long n = deadLetteredIds.size();
        for (DeliveryResult r : results()) {
            n += r.getFoldedIds().isEmpty() ? 1 : r.getFoldedIds().size();
        }
        return n;
    }

    public Set<String> deadLetteredIds() {
        return Set.copyOf(deadLetteredIds);
    }

    public Map<String, Long> countByStatus() {
        Map<String, Long> m = new java.util.TreeMap<>();
        for (DeliveryResult r : results()) {
            m.merge(r.getStatus().name(), 1L, Long::sum);
        }
        return m;
    }

    private void throwIfFailed() {
        if (failure != null) {
            throw new IllegalStateException("result collector failed: " + failure.getMessage(), failure);
        }
    }

    @Override
    public void close() throws InterruptedException {
        running.set(false);
        consumer.wakeup();
        thread.join(5_000);
        consumer.close(Duration.ofSeconds(2));
    }
}
