package dev.sluice.sender;


import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.config.Settings;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Shared infrastructure of the sender's integration tests: one embedded broker, one redis-server and one
 * in-process schema registry for the whole failsafe JVM (started on first use, stopped at exit), so each
 * test class pays only for its own work. Tests isolate themselves by topic prefix and bot id.
 */
final class SenderIt {
    private static EmbeddedKafka kafka;
    private static RedisInstance redis;
    private static InProcessSchemaRegistry registry;

    private SenderIt() {
    }

    static synchronized void start() {
        if (kafka != null) {
            return;
        }
        kafka = EmbeddedKafka.start();
        redis = RedisLauncher.start();
        registry = InProcessSchemaRegistry.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            for (AutoCloseable c : new AutoCloseable[] {registry, redis, kafka}) {
                try {
                    c.close();
                } catch (Exception e) {
                    // best effort at exit
                }
            }
        }));
    }

    static EmbeddedKafka kafka() {
        start();
        return kafka;
    }

    static RedisInstance redis() {
        start();
        return redis;
    }

    static InProcessSchemaRegistry registry() {
        start();
        return registry;
    }

    /**
     * Creates {@code <prefix>.outbox.live}, {@code .outbox.backfill}, {@code .delivery.results}, {@code .sender.status}
     * and {@code .outbox.dlq}.
     */
    static void topics(String prefix, int partitions) {
        kafka().createTopics(partitions, prefix + ".outbox.live", prefix + ".outbox.backfill",
                prefix + ".delivery.results", prefix + ".sender.status", prefix + ".outbox.dlq");
        TopicsReady.await(kafka, prefix + ".outbox.live", prefix + ".outbox.backfill", prefix + ".delivery.results",
                prefix + ".sender.status", prefix + ".outbox.dlq");
    }

    /** Sender settings against the shared infrastructure; bots maps logical bot id → token. */
    static Map<String, String> settings(String prefix, String group, String telegramApiUrl, Map<String, String> bots) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("bootstrap.servers", kafka().bootstrapServers());
        m.put("schema.registry.url", registry.url());
        m.put("sender.group.id", group);
        m.put("sender.instance.id", group + "-1");
        m.put("topic.outbox.live", prefix + ".outbox.live");
        m.put("topic.outbox.backfill", prefix + ".outbox.backfill");
        m.put("topic.delivery.results", prefix + ".delivery.results");
        m.put("topic.sender.status", prefix + ".sender.status");
        m.put("topic.outbox.dlq", prefix + ".outbox.dlq");
        m.put("telegram.api.url", telegramApiUrl);
        bots.forEach((bot, token) -> m.put("bot." + bot + ".token", token));
        m.put("redis.url", redis.url());
        m.put("sender.commit.interval.ms", "100");
        m.put("sender.retry.backoff.ms", "100");
        m.put("sender.request.timeout.ms", "5000");
        return m;
    }

    /** A sender running in a JVM of its own ({@link SenderProcessMain}), its properties file and its output file. */
    record Child(Process process, java.nio.file.Path props, java.nio.file.Path log) {
    }

    /**
     * Starts {@code settings} with {@code sender.instance.id=instanceId} as a sender in a child JVM (a kill -9 or a
     * SIGSTOP of it is a real process's); it prints {@code SENDER-STARTED} to its log once started.
     */
    static Child startChild(Map<String, String> settings, String instanceId) throws java.io.IOException {
        Map<String, String> childSettings = new java.util.HashMap<>(settings);
        childSettings.put("sender.instance.id", instanceId);
        java.nio.file.Path props = java.nio.file.Files.createTempFile(instanceId, ".properties");
        java.nio.file.Path log = java.nio.file.Files.createTempFile(instanceId, ".log");
        java.util.Properties p = new java.util.Properties();
        p.putAll(childSettings);
        try (java.io.Writer w = java.nio.file.Files.newBufferedWriter(props)) {
            p.store(w, "child sender " + instanceId);
        }
        String javaBin = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(javaBin, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                SenderProcessMain.class.getName(), props.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        return new Child(child, props, log);
    }

    static SenderService sender(Map<String, String> settings) {
        return new SenderService(SenderConfig.from(Settings.of(settings)),
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    }

    static OutboundMessage.Builder message(String id, String bot, String chat) {
        Instant now = Instant.now();
        return OutboundMessage.newBuilder().setId(id).setBotId(bot).setChatId(chat).setKind("test")
                .setEventClass(NotificationClass.ROUTINE).setText("msg " + id).setCreatedAt(now).setDueAt(now);
    }

    static void produce(String topic, List<OutboundMessage> messages) {
        produce(topic, messages, registry().url());
    }

    /** Writes the messages as the topology does, with schemas from the registry at {@code registryUrl}. */
    static void produce(String topic, List<OutboundMessage> messages, String registryUrl) {
        SpecificAvroSerde<OutboundMessage> serde = new SpecificAvroSerde<>(
                new CachedSchemaRegistryClient(registryUrl), OutboundMessage.class);
        Map<String, Object> pp = new HashMap<>();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        pp.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        try (KafkaProducer<String, OutboundMessage> p = new KafkaProducer<>(pp, new StringSerializer(), serde.serializer())) {
            messages.forEach(m -> p.send(new ProducerRecord<>(topic, m.getChatId(), m)));
            p.flush();
        }
    }

    /** A producer of outbound messages kept open (paced producing in tests). */
    static KafkaProducer<String, OutboundMessage> producer() {
        SpecificAvroSerde<OutboundMessage> serde = new SpecificAvroSerde<>(
                new CachedSchemaRegistryClient(registry().url()), OutboundMessage.class);
        Map<String, Object> pp = new HashMap<>();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        pp.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        return new KafkaProducer<>(pp, new StringSerializer(), serde.serializer());
    }

    /** Every record of a {@code sender.status} topic from the start: key → values in order (null = tombstone). */
    static Map<String, List<dev.sluice.avro.SenderStatus>> statusReports(String topic) {
        SpecificAvroSerde<dev.sluice.avro.SenderStatus> serde = new SpecificAvroSerde<>(
                new CachedSchemaRegistryClient(registry().url()), dev.sluice.avro.SenderStatus.class);
        Map<String, Object> cp = new HashMap<>();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, topic + "-reader-" + System.nanoTime());
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        Map<String, List<dev.sluice.avro.SenderStatus>> out = new LinkedHashMap<>();
        try (KafkaConsumer<String, dev.sluice.avro.SenderStatus> c = new KafkaConsumer<>(cp, new StringDeserializer(),
                serde.deserializer())) {
            c.subscribe(List.of(topic));
            long until = System.currentTimeMillis() + 5_000;
            int empty = 0;
            while (System.currentTimeMillis() < until && empty < 5) {
                var records = c.poll(Duration.ofMillis(300));
                if (records.isEmpty() && !out.isEmpty()) {
                    empty++;
                }
                for (ConsumerRecord<String, dev.sluice.avro.SenderStatus> r : records) {
                    out.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value());
                }
            }
        }
        return out;
    }

    /** Reads a results topic from the start; keeps every record (duplicates included). */
    static final class Results implements AutoCloseable {
        private final KafkaConsumer<String, DeliveryResult> consumer;
        final List<DeliveryResult> all = new ArrayList<>();
        final Map<String, DeliveryResult> byId = new LinkedHashMap<>();

        Results(String topic) {
            this(topic, registry().url());
        }

        /** Reads results whose schemas are in the registry at {@code registryUrl}. */
        Results(String topic, String registryUrl) {
            SpecificAvroSerde<DeliveryResult> serde = new SpecificAvroSerde<>(
                    new CachedSchemaRegistryClient(registryUrl), DeliveryResult.class);
            Map<String, Object> cp = new HashMap<>();
            cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
            cp.put(ConsumerConfig.GROUP_ID_CONFIG, topic + "-reader-" + System.nanoTime());
            cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            consumer = new KafkaConsumer<>(cp, new StringDeserializer(), serde.deserializer());
            consumer.subscribe(List.of(topic));
        }

        synchronized void poll(Duration d) {
            for (ConsumerRecord<String, DeliveryResult> r : consumer.poll(d)) {
                all.add(r.value());
                byId.put(r.value().getMessageId(), r.value());
            }
        }

        /** Waits until {@code n} distinct messages have a result, then reads a little longer for duplicates. */
        Map<String, DeliveryResult> awaitResults(int n, Duration bound) {
            org.awaitility.Awaitility.await().atMost(bound).pollInterval(Duration.ofMillis(50)).until(() -> {
                poll(Duration.ofMillis(100));
                return byId.size() >= n;
            });
            poll(Duration.ofMillis(500));
            return byId;
        }

        void awaitUntil(Predicate<Results> condition, Duration bound) {
            org.awaitility.Awaitility.await().atMost(bound).pollInterval(Duration.ofMillis(50)).until(() -> {
                poll(Duration.ofMillis(100));
                return condition.test(this);
            });
        }

        @Override
        public void close() {
            consumer.close();
        }
    }
}
