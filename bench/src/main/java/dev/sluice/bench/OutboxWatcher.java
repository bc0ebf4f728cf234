package dev.sluice.bench;

import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.schemas.SpecificAvroSerde;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Notes the wall-clock moment each CRITICAL message becomes visible on {@code outbox.live} to a read_committed
 * consumer (the topology's exactly-once commit), so a scenario can split a reminder's latency into the topology's
 * part (produced → committed to the outbox) and the sender's part (committed → accepted by the provider).
 */
final class OutboxWatcher implements AutoCloseable {
    private final KafkaConsumer<String, OutboundMessage> consumer;
    private final Map<String, Long> criticalSeenAtMs = new ConcurrentHashMap<>();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Thread thread;

    OutboxWatcher(Infra infra) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, infra.kafka.bootstrapServers());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "bench-outbox-watcher");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        SpecificAvroSerde<OutboundMessage> serde = new SpecificAvroSerde<>(infra.client, OutboundMessage.class);
        this.consumer = new KafkaConsumer<>(p, new StringDeserializer(), serde.deserializer());
        consumer.subscribe(List.of(infra.topics.outboxLive()));
        this.thread = new Thread(this::loop, "bench-outbox-watcher");
        thread.setDaemon(true);
        thread.start();
    }

    private void loop() {
        try {
            while (running.get()) {
                for (ConsumerRecord<String, OutboundMessage> r : consumer.poll(Duration.ofMillis(50))) {
                    long now = System.currentTimeMillis();
                    if (r.value() != null && r.value().getEventClass() == NotificationClass.CRITICAL) {
                        criticalSeenAtMs.putIfAbsent(r.value().getId(), now);
                    }
                }
            }
        } catch (org.apache.kafka.common.errors.WakeupException e) {
            // closing
        }
    }

    /** Epoch ms at which the CRITICAL message {@code id} was first seen committed, or null. */
    Long seenAtMs(String id) {
        return criticalSeenAtMs.get(id);
    }

    @Override
    public void close() throws InterruptedException {
        running.set(false);
        consumer.wakeup();
        thread.join(5_000);
        consumer.close();
    }
}
