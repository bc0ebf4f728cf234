package dev.sluice.topology;

import static dev.sluice.topology.BrokerAndRegistry.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroDeserializer;
import dev.sluice.schemas.SpecificAvroSerializer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * F9 on a real (embedded KRaft) broker with exactly_once_v2: what used to crash-loop the topology.
 * Oversized fields are dead-lettered at validation; a deterministic failure that still escapes (a permanent
 * registry error on register) ends after a bounded number of stream thread replacements, in state ERROR.
 */
class CrashLoopIT {
    @RegisterExtension
    static final BrokerAndRegistry infra = new BrokerAndRegistry();

    @TempDir
    Path stateDir;

    private Settings settings(String prefix) {
        return BrokerAndRegistry.withTopicPrefix(infra.settings("sluice-" + prefix, stateDir), prefix)
                .with("classify.kind.patterns", "board.*=COLLAPSIBLE");
    }

    @Test
    void aHundredNotificationsWithTwelveThousandCharacterIdsAreDeadLetteredWithAReasonAndNoThreadDies() throws Exception {
        TopologyConfig config = TopologyConfig.from(settings("bigid"));
        Topics topics = config.topics();
        infra.ensureTopics(topics, 2);
        CachedSchemaRegistryClient client = new CachedSchemaRegistryClient(infra.registry().url());
        TopologyCounts counts = new TopologyCounts();
        try (TopologyService service = new TopologyService(config, new CachedSchemaRegistryClient(infra.registry().url()), counts)) {
            service.start();
            BrokerAndRegistry.awaitRunning(service);
            try (KafkaProducer<byte[], byte[]> producer = infra.bytesProducer()) {
                SpecificAvroSerializer<Notification> avro = new SpecificAvroSerializer<>(client);
                for (int i = 0; i < 100; i++) {
                    // F9's repro: one digest key, COLLAPSIBLE, each id 12,000 characters.
                    Notification n = Notification.newBuilder().setId(String.format("%05d", i) + "x".repeat(11_995)).setBotId("alerts")
                            .setChatId("1001").setKind("board.updated").setEntity("board-7").setEventClass(NotificationClass.COLLAPSIBLE)
                            .setText("Board 7: state " + i).setCreatedAt(Instant.now()).build();
                    producer.send(new ProducerRecord<>(topics.notifications(), utf8("1001"), avro.serialize(topics.notifications(), n)));
                }
                producer.flush();
            }
            List<ConsumerRecord<byte[], byte[]>> dead = consume(topics.dlq(), new ByteArraySerializerless(), 100);
            assertThat(dead).allSatisfy(r -> assertThat(new String(r.headers().lastHeader(DeadLetterHeaders.REASON).value(),
                    StandardCharsets.UTF_8)).startsWith("field id has 12000 bytes, more than 256 (UTF-8)"));
            List<ConsumerRecord<byte[], byte[]>> results = consume(topics.deliveryResults(), new ByteArraySerializerless(), 100);
            SpecificAvroDeserializer<DeliveryResult> resultReader = new SpecificAvroDeserializer<>(client, DeliveryResult.class);
            assertThat(results).allSatisfy(r -> {
                DeliveryResult result = resultReader.deserialize(topics.deliveryResults(), r.value());
                assertThat(result.getStatus()).isEqualTo(DeliveryStatus.FAILED);
                assertThat(result.getMessageId()).hasSize(12_000);
                assertThat(result.getReason()).startsWith("dead-lettered to bigid.notifications.dlq: field id has 12000 bytes");
            });
            assertThat(service.state()).isEqualTo(KafkaStreams.State.RUNNING);
            assertThat(service.threadReplacements()).as("at most one thread replacement").isLessThanOrEqualTo(1);
            System.out.printf("crash-loop: 100 oversized ids dead-lettered, %d thread replacements%n", service.threadReplacements());
        }
    }

    @Test
    void aDeterministicWriteFailureEndsInErrorAfterTheBoundedReplacementsInsteadOfLoopingForever() throws Exception {
        // A producer limit below what validation allows (a deployment mistake): every write of this record fails
        // with RecordTooLargeException, on every replacement, the same way.
        TopologyConfig config = TopologyConfig.from(settings("toolarge")
                .with("kafka.max.request.size", "2048")
                .with("stream.thread.replacements.max", "2").with("stream.thread.replacements.window.ms", "600000")
                // A failed thread's member does not leave the group: its replacement's rebalance waits for the session
                // timeout, 6 s here instead of the 45 s default (about 90 s of the test's time for two replacements).
                .with("kafka.session.timeout.ms", "6000").with("kafka.heartbeat.interval.ms", "1000"));
        Topics topics = config.topics();
        infra.ensureTopics(topics, 1);
        CachedSchemaRegistryClient client = new CachedSchemaRegistryClient(infra.registry().url());
        TopologyCounts counts = new TopologyCounts();
        try (TopologyService service = new TopologyService(config, new CachedSchemaRegistryClient(infra.registry().url()), counts)) {
            service.start();
            BrokerAndRegistry.awaitRunning(service);
            try (KafkaProducer<byte[], byte[]> producer = infra.bytesProducer()) {
                Notification n = Notification.newBuilder().setId("big-text").setBotId("alerts").setChatId("1001").setKind("quake.alert")
                        .setEventClass(NotificationClass.CRITICAL).setText("y".repeat(3_000)).setCreatedAt(Instant.now()).build();
                producer.send(new ProducerRecord<>(topics.notifications(), utf8("1001"),
                        new SpecificAvroSerializer<Notification>(client).serialize(topics.notifications(), n))).get();
            }
            // The failing stream threads' exceptions are the point here: Awaitility must not fail on them.
            await().dontCatchUncaughtExceptions().atMost(Duration.ofSeconds(120)).until(() -> service.state() == KafkaStreams.State.ERROR);
            assertThat(service.threadReplacements()).isEqualTo(2);
            assertThat(counts.get("stream.thread.replacements")).isEqualTo(2);
            assertThat(counts.get("stream.thread.shutdowns")).isEqualTo(1);
        }
    }

    /** Reads raw values. */
    private static final class ByteArraySerializerless extends org.apache.kafka.common.serialization.ByteArrayDeserializer {
    }

    private static List<ConsumerRecord<byte[], byte[]>> consume(String topic, Deserializer<byte[]> values, int expected) {
        return infra.consumeExactly(topic, new org.apache.kafka.common.serialization.ByteArrayDeserializer(), values, expected,
                Duration.ofSeconds(90));
    }
}
