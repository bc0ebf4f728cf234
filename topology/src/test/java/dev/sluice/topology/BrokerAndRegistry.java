package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.InProcessSchemaRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The set-up the topology's broker ITs share: one embedded KRaft broker and one in-process schema registry per test
 * class (started before its first test, stopped after its last), the topology's base settings, its topics, and
 * read_committed reading with a bound. Register it in the IT as
 * {@code @RegisterExtension static final BrokerAndRegistry infra = new BrokerAndRegistry();}.
 *
 * <p>Thread ownership: JUnit's thread starts and stops it; tests read it from the test thread. The consumers and
 * producers it hands out belong to the caller, who closes them.
 */
final class BrokerAndRegistry implements BeforeAllCallback, AfterAllCallback {
    /** Every topic key, for {@link #withTopicPrefix}. */
    private static final List<String> TOPIC_KEYS = List.of(Topics.NOTIFICATIONS, Topics.NOTIFICATIONS_BACKFILL, Topics.DLQ,
            Topics.OUTBOX_LIVE, Topics.OUTBOX_BACKFILL, Topics.DELIVERY_RESULTS, Topics.CHAT_EVENTS, Topics.SENDER_STATUS,
            Topics.PREFERENCES, Topics.OUTBOX_DLQ, Topics.DELIVERY_PARTS);

    private EmbeddedKafka kafka;
    private InProcessSchemaRegistry registry;

    @Override
    public void beforeAll(ExtensionContext context) {
        kafka = EmbeddedKafka.start();
        registry = InProcessSchemaRegistry.start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (registry != null) {
            registry.close();
        }
        if (kafka != null) {
            kafka.close();
        }
    }

    EmbeddedKafka kafka() {
        return kafka;
    }

    InProcessSchemaRegistry registry() {
        return registry;
    }

    String bootstrapServers() {
        return kafka.bootstrapServers();
    }

    /**
     * The topology's settings on this broker and registry: {@code application.id}, {@code state.dir} and
     * {@code commit.interval.ms=100}; add or override with {@link Settings#with}.
     */
    Settings settings(String applicationId, Path stateDir) {
        return Settings.of(Map.of(
                "bootstrap.servers", kafka.bootstrapServers(),
                "schema.registry.url", registry.url(),
                "application.id", applicationId,
                "state.dir", stateDir.toString(),
                "commit.interval.ms", "100"));
    }

    /** {@code settings} with every Sluice topic named {@code <prefix>.<name>}, so that tests of one class share no topic. */
    static Settings withTopicPrefix(Settings settings, String prefix) {
        Settings s = settings;
        for (String key : TOPIC_KEYS) {
            s = s.with(key, prefix + "." + key.substring("topic.".length()));
        }
        return s;
    }

    /** Creates {@code topics} (replication 1) with {@code partitions} partitions where they are missing; returns what it created. */
    List<String> ensureTopics(Topics topics, int partitions) throws Exception {
        try (Admin admin = admin()) {
            return TopicBootstrap.ensureTopics(admin, topics, partitions, (short) 1);
        }
    }

    /** An admin client; the caller closes it. */
    Admin admin() {
        return Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()));
    }

    /** Waits (at most 60 s) until {@code service} is RUNNING. */
    static void awaitRunning(TopologyService service) {
        await().atMost(Duration.ofSeconds(60)).until(() -> service.state() == KafkaStreams.State.RUNNING);
    }

    /** A producer of raw bytes; the caller closes it. */
    KafkaProducer<byte[], byte[]> bytesProducer() {
        return new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
                new ByteArraySerializer(), new ByteArraySerializer());
    }

    /** A read_committed consumer of group {@code group}, from the earliest offset, not subscribed; the caller closes it. */
    <K, V> KafkaConsumer<K, V> readCommitted(String group, Deserializer<K> keys, Deserializer<V> values) {
        return new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.GROUP_ID_CONFIG, group), keys, values);
    }

    /**
     * Reads {@code topic} (read_committed, a fresh group) until {@code expected} records came, at most {@code bound};
     * then half a second more, and asserts that exactly {@code expected} came (no duplicates under exactly-once).
     */
    <K, V> List<ConsumerRecord<K, V>> consumeExactly(String topic, Deserializer<K> keys, Deserializer<V> values, int expected,
                                                     Duration bound) {
        List<ConsumerRecord<K, V>> out = new ArrayList<>();
        try (KafkaConsumer<K, V> consumer = readCommitted("it-" + topic + "-" + System.nanoTime(), keys, values)) {
            consumer.subscribe(List.of(topic));
            await().atMost(bound).until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
                return out.size() >= expected;
            });
            // Nothing more than expected arrives (e.g. no duplicates under exactly-once).
            consumer.poll(Duration.ofMillis(500)).forEach(out::add);
        }
        assertThat(out).hasSize(expected);
        return out;
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
