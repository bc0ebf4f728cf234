package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.sender.SenderConfig;
import dev.sluice.sender.SenderService;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.topology.TopicBootstrap;
import dev.sluice.topology.TopologyConfig;
import dev.sluice.topology.TopologyService;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Test harness for issue 20's pipeline ITs: the embedded KRaft broker, the in-process schema registry, the real topology
 * and one real sender ({@code budget.mode=local}) in front of a {@link FakeTelegram}; notifications go in through
 * {@code sluice produce} (JSON lines) and results are read from {@code delivery.results} (read_committed). Used from the
 * test thread only (the consumer is not thread-safe); the services own their own threads.
 */
final class RichStack implements AutoCloseable {
    static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456789");
    static final String BOT = "123456789";

    final FakeTelegram telegram;
    private final EmbeddedKafka kafka;
    private final InProcessSchemaRegistry registry;
    private final TopologyService topology;
    private final SenderService sender;
    private final KafkaConsumer<String, DeliveryResult> consumer;
    private final Path dir;
    private final AtomicInteger files = new AtomicInteger();
    private final Map<String, DeliveryResult> results = new ConcurrentHashMap<>();
    private int duplicateResults;

    RichStack(Path dir, FakeTelegram telegram, Map<String, String> topologySettings) throws Exception {
        AvroTrust.ensure();
        this.dir = dir;
        this.telegram = telegram;
        this.kafka = EmbeddedKafka.start();
        this.registry = InProcessSchemaRegistry.start();
        Topics topics = Topics.defaults();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            TopicBootstrap.ensureTopics(admin, topics, 3, (short) 1);
        }
        Settings common = Settings.of(Map.of("bootstrap.servers", kafka.bootstrapServers(), "schema.registry.url", registry.url()));
        Settings t = common.with("application.id", "rich-sender-it").with("state.dir", dir.resolve("state").toString())
                .with("commit.interval.ms", "100");
        for (Map.Entry<String, String> e : topologySettings.entrySet()) {
            t = t.with(e.getKey(), e.getValue());
        }
        this.topology = new TopologyService(TopologyConfig.from(t));
        this.sender = new SenderService(SenderConfig.from(common.with("sender.instance.id", "sender-1")
                .with("telegram.api.url", telegram.apiUrl()).with("bot.alerts.token", TOKEN)
                .with("budget.mode", "local").with("sender.commit.interval.ms", "100")), new SimpleMeterRegistry());
        this.consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "rich-sender-it-results", ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"), new StringDeserializer(),
                new SpecificAvroSerde<>(new CachedSchemaRegistryClient(registry.url()), DeliveryResult.class).deserializer());
        consumer.subscribe(List.of(topics.deliveryResults()));
        topology.start();
        sender.start();
    }

    /** Writes {@code lines} (JSON, one notification each) through {@code sluice produce}, in order. */
    void produce(List<String> lines) throws Exception {
        Path file = dir.resolve("lines-" + files.incrementAndGet() + ".jsonl");
        Files.write(file, lines);
        int code = new picocli.CommandLine(new ProduceCommand()).setCaseInsensitiveEnumValuesAllowed(true).execute(
                "--file", file.toString(), "--progress", "none", "-D", "bootstrap.servers=" + kafka.bootstrapServers(),
                "-D", "schema.registry.url=" + registry.url());
        assertThat(code).as("sluice produce exit code").isZero();
    }

    /** Polls results until every id in {@code ids} has one, within {@code bound}; returns them. */
    Map<String, DeliveryResult> awaitResults(Duration bound, String... ids) {
        await().atMost(bound).pollInterval(Duration.ofMillis(50)).until(() -> {
            poll(Duration.ofMillis(200));
            for (String id : ids) {
                if (!results.containsKey(id)) {
                    return false;
                }
            }
            return true;
        });
        return Map.copyOf(results);
    }

    /** Polls results until one matches {@code test}, within {@code bound}; returns it. */
    DeliveryResult awaitResult(Duration bound, java.util.function.Predicate<DeliveryResult> test) {
        return await().atMost(bound).pollInterval(Duration.ofMillis(50)).until(() -> {
            poll(Duration.ofMillis(200));
            return results.values().stream().filter(test).findFirst().orElse(null);
        }, java.util.Objects::nonNull);
    }

    /** Results that repeated an id already seen (must stay 0: one result per id). */
    int duplicateResults() {
        poll(Duration.ofMillis(500));
        return duplicateResults;
    }

    private void poll(Duration d) {
        consumer.poll(d).forEach(r -> {
            if (results.putIfAbsent(r.value().getMessageId(), r.value()) != null) {
                duplicateResults++;
            }
        });
    }

    /** A notification line for bot {@code alerts}; {@code extra} is more JSON fields, without braces (may be empty). */
    static String line(String id, String chat, String text, String extra) {
        StringBuilder b = new StringBuilder("{\"id\":\"").append(id).append("\",\"bot_id\":\"alerts\",\"chat_id\":\"").append(chat)
                .append("\",\"kind\":\"k\",\"event_class\":\"CRITICAL\"");
        if (text != null) {
            b.append(",\"text\":\"").append(text).append('"');
        }
        if (!extra.isEmpty()) {
            b.append(',').append(extra);
        }
        return b.append('}').toString();
    }

    @Override
    public void close() {
        consumer.close();
        sender.close();
        topology.close();
        registry.close();
        kafka.close();
    }
}
