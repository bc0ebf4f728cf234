package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

class EmbeddedKafkaIT {

    @Test
    void producesConsumesCommitsTransactionsAndRemovesItsDirOnClose() throws Exception {
        long started = System.nanoTime();
        Path dir;
        EmbeddedKafka closing;
        try (EmbeddedKafka kafka = EmbeddedKafka.start()) {
            closing = kafka;
            System.out.printf("embedded Kafka started in %d ms%n", (System.nanoTime() - started) / 1_000_000);
            dir = kafka.logDir();
            assertThat(dir).isDirectory();
            kafka.createTopics(2, "plain", "tx");
            kafka.createTopic("compacted", 1, Map.of("cleanup.policy", "compact"));
            assertThat(kafka.admin().listTopics().names().get()).contains("plain", "tx", "compacted");

            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(kafka, null))) {
                RecordMetadata meta = producer.send(new ProducerRecord<>("plain", "k1", "v1")).get();
                assertThat(meta.offset()).isZero();
            }
            assertThat(consumeAll(kafka, "plain", "read_uncommitted", 1)).containsExactly("k1=v1");

            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(kafka, "tx-1"))) {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>("tx", "a", "aborted"));
                producer.abortTransaction();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>("tx", "a", "committed"));
                producer.commitTransaction();
            }
            // read_committed sees only the committed record, never the aborted one
            assertThat(consumeAll(kafka, "tx", "read_committed", 1)).containsExactly("a=committed");
            long closeStart = System.nanoTime();
            kafka.close();
            System.out.printf("embedded Kafka closed in %d ms%n", (System.nanoTime() - closeStart) / 1_000_000);
        }
        assertThat(Files.exists(dir)).as("log dir removed on close").isFalse();
        closing.close(); // idempotent
    }

    @Test
    void aPersistentLogDirKeepsTopicsAndRecordsAcrossRestartsOnAFixedPort(@org.junit.jupiter.api.io.TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("kafka");
        int port = Ports.freePort();
        try (EmbeddedKafka kafka = EmbeddedKafka.startPersistent(dir, port, Map.of())) {
            assertThat(kafka.bootstrapServers()).isEqualTo("127.0.0.1:" + port);
            kafka.createTopics(1, "kept");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(kafka, null))) {
                producer.send(new ProducerRecord<>("kept", "k", "before restart")).get();
            }
        }
        assertThat(dir.resolve("meta.properties")).as("log dir kept on close").exists();
        try (EmbeddedKafka again = EmbeddedKafka.startPersistent(dir, port, Map.of())) {
            assertThat(again.admin().listTopics().names().get()).contains("kept");
            assertThat(consumeAll(again, "kept", "read_committed", 1)).containsExactly("k=before restart");
        }
    }

    @Test
    void unknownTopicIsNotAutoCreated() throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start(Map.of("num.partitions", "3"))) {
            kafka.createTopics(1, "exists");
            Map<String, Object> props = producerProps(kafka, null);
            props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 1500);
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
                assertThatThrownBy(() -> producer.send(new ProducerRecord<>("typo", "k", "v")).get())
                        .hasCauseInstanceOf(org.apache.kafka.common.errors.TimeoutException.class);
            }
            assertThat(kafka.admin().listTopics().names().get()).isEqualTo(Set.of("exists"));
        }
    }

    private static Map<String, Object> producerProps(EmbeddedKafka kafka, String transactionalId) {
        Map<String, Object> p = new java.util.HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        if (transactionalId != null) {
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        }
        return p;
    }

    private static List<String> consumeAll(EmbeddedKafka kafka, String topic, String isolation, int expected) {
        Map<String, Object> c = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "g-" + topic,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        List<String> seen = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (seen.size() < expected && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    seen.add(r.key() + "=" + r.value());
                }
            }
            // one more short poll: nothing else (e.g. an aborted record) may show up
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                seen.add(r.key() + "=" + r.value());
            }
        }
        return seen;
    }
}
