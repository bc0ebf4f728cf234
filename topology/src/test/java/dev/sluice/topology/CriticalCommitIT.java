package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.config.Topics;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroDeserializer;
import dev.sluice.schemas.SpecificAvroSerializer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21: a CRITICAL notification closes its exactly-once transaction at once ({@code critical.commit.interval.ms},
 * {@link CriticalCommits}) instead of at {@code commit.interval.ms}. With the interval at 2 minutes, a read_committed
 * consumer of {@code outbox.live} sees the reminder, and the routine message of its chat processed before it (same
 * transaction, order kept), within the test's bound of 60 s; without the early commit they would wait for the interval.
 */
class CriticalCommitIT {
    @RegisterExtension
    static final BrokerAndRegistry infra = new BrokerAndRegistry();

    @TempDir
    Path stateDir;

    @Test
    void a_critical_notification_and_what_came_before_it_are_committed_without_waiting_for_the_commit_interval() throws Exception {
        Topics topics = Topics.defaults();
        infra.ensureTopics(topics, 3);
        TopologyConfig config = TopologyConfig.from(infra.settings("critical-commit-it", stateDir)
                .with("commit.interval.ms", "120000")
                // Kafka Streams refuses a transaction timeout (10 s under exactly-once) below the commit interval
                .with("kafka.producer.transaction.timeout.ms", "300000")
                .with("critical.commit.interval.ms", "20"));
        CachedSchemaRegistryClient client = new CachedSchemaRegistryClient(infra.registry().url());
        try (TopologyService service = new TopologyService(config);
             KafkaConsumer<String, OutboundMessage> consumer = infra.readCommitted("critical-commit-it-reader",
                     new StringDeserializer(), new SpecificAvroDeserializer<>(client, OutboundMessage.class))) {
            service.start();
            BrokerAndRegistry.awaitRunning(service);
            consumer.subscribe(List.of(topics.outboxLive()));
            long producedAt;
            try (KafkaProducer<String, Notification> producer = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()), new StringSerializer(),
                    new SpecificAvroSerializer<Notification>(client))) {
                producedAt = System.currentTimeMillis();
                // keyed by chat id: one partition, one task, read in this order
                producer.send(new ProducerRecord<>(topics.notifications(), "4242", notification("r-1", NotificationClass.ROUTINE)));
                producer.send(new ProducerRecord<>(topics.notifications(), "4242", notification("c-1", NotificationClass.CRITICAL)));
                producer.flush();
            }
            List<String> seen = new ArrayList<>();
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> seen.add(r.value().getId()));
                return seen.contains("c-1");
            });
            long visibleAfterMs = System.currentTimeMillis() - producedAt;
            assertThat(seen).as("the routine message before the reminder, in its order").containsExactly("r-1", "c-1");
            assertThat(visibleAfterMs).as("visible long before commit.interval.ms (120 s after the start)").isLessThan(60_000);
        }
    }

    private static Notification notification(String id, NotificationClass eventClass) {
        Instant now = Instant.now();
        return Notification.newBuilder().setId(id).setBotId("alerts").setChatId("4242").setUserId("4242").setKind("meeting.reminder")
                .setEventClass(eventClass).setText("text of " + id).setCreatedAt(now)
                .setExpiresAt(eventClass == NotificationClass.CRITICAL ? now.plus(Duration.ofMinutes(10)) : null).build();
    }
}
