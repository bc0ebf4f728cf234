package dev.sluice.bench;

import dev.sluice.app.demo.ResultCollector;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.config.Topics;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import dev.sluice.topology.TopicBootstrap;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The parts every scenario runs on, all on this machine: testkit's embedded KRaft broker, a redis-server
 * process of its own ({@link RedisLauncher#localProcess()}: {@code redis-server} from the PATH), the
 * in-process schema registry and {@link FakeTelegram} with the given limits; Sluice's topics created with
 * {@link TopicBootstrap}. Closed in reverse order.
 */
public final class Infra implements AutoCloseable {
    public static final int PARTITIONS = 6;

    public final EmbeddedKafka kafka;
    public final RedisInstance redis;
    public final InProcessSchemaRegistry registry;
    public final FakeTelegram telegram;
    public final Topics topics = Topics.defaults();
    public final SchemaRegistryClient client;
    public final Path workDir;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    private Infra(FakeTelegramLimits limits, int telegramThreads) throws Exception {
        AvroTrust.ensure();
        workDir = Files.createTempDirectory("sluice-bench");
        say("starting embedded Kafka (KRaft), redis-server, schema registry, FakeTelegram; work dir %s", workDir);
        kafka = track(EmbeddedKafka.start());
        redis = track(RedisLauncher.localProcess().launch()); // always our own process: chaos stops and restarts it
        registry = track(InProcessSchemaRegistry.start());
        telegram = track(FakeTelegram.builder().limits(limits).threads(telegramThreads).start());
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            TopicBootstrap.ensureTopics(admin, topics, PARTITIONS, (short) 1);
        }
        client = new CachedSchemaRegistryClient(registry.url());
    }

    public static Infra start(FakeTelegramLimits limits) throws Exception {
        return new Infra(limits, 64);
    }

    /** Keeps {@code c} to be closed with the infrastructure (in reverse order). */
    public <T extends AutoCloseable> T track(T c) {
        closeables.add(c);
        return c;
    }

    /** A collector of {@code delivery.results} and dead letters from the beginning (app's demo collector). */
    public ResultCollector collector() {
        ResultCollector c = new ResultCollector(kafka.bootstrapServers(),
                new SpecificAvroSerde<>(client, DeliveryResult.class).deserializer(), topics.deliveryResults(), topics.dlq());
        track(c);
        c.start();
        return c;
    }

    /** An idempotent producer (acks=all) of outbound messages, keyed by chat id as the topology writes them. */
    public KafkaProducer<String, OutboundMessage> outboxProducer() {
        return track(new KafkaProducer<>(producerProps(), new StringSerializer(),
                new SpecificAvroSerde<>(client, OutboundMessage.class).serializer()));
    }

    public Properties producerProps() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "10");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "262144");
        return p;
    }

    /** Writes {@code messages} to {@code outbox.live} and waits until the broker has them all. */
    public void produceOutbox(KafkaProducer<String, OutboundMessage> producer, Collection<OutboundMessage> messages) {
        for (OutboundMessage m : messages) {
            producer.send(new ProducerRecord<>(topics.outboxLive(), m.getChatId(), m));
        }
        producer.flush();
    }

    /** The settings every sender of a scenario shares (the broker, registry, Redis and FakeTelegram). */
    public Map<String, String> senderSettings(String telegramApiUrl) {
        return new java.util.LinkedHashMap<>(Map.of(
                "bootstrap.servers", kafka.bootstrapServers(),
                "schema.registry.url", registry.url(),
                "redis.url", redis.url(),
                "telegram.api.url", telegramApiUrl,
                // the 250 ms default also bounds the first connect, which a cold JVM on a loaded 2-core
                // machine misses (the sender then exits at start)
                "redis.command.timeout.ms", "1000",
                // metrics and health on a free port each: several senders share this host
                "ops.port", "0", "ops.bind.address", "127.0.0.1"));
    }

    @Override
    public void close() {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception e) {
                say("while stopping %s: %s", closeables.get(i).getClass().getSimpleName(), e.getMessage());
            }
        }
        try (var walk = Files.walk(workDir)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (Exception ignored) {
            // temp dir; best effort
        }
    }

    public static void say(String format, Object... args) {
        System.out.printf(Locale.ROOT, "[bench %tT] %s%n", System.currentTimeMillis(), String.format(Locale.ROOT, format, args));
    }
}
