package dev.sluice.app.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.app.ops.MetricsCheck;
import dev.sluice.app.TopologyCommand;
import dev.sluice.app.ops.HealthCheck;
import dev.sluice.app.ops.ProcessOps;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.sender.SenderConfig;
import dev.sluice.sender.SenderService;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.topology.TopicBootstrap;
import dev.sluice.topology.TopologyConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The walking skeleton's end-to-end scenario, written once and run on two kinds of infrastructure
 * ({@link EndToEndEmbeddedIT}: the embedded KRaft broker and a redis-server process;
 * {@link EndToEndContainersIT}: Kafka and Redis containers), so the two can never drift.
 *
 * <p>{@code messages} CRITICAL notifications (never folded) to {@code chats} chats of one bot go through the
 * real topology and three sender instances that share nothing but Redis, to the fake Telegram with scaled
 * limits. Then: exactly one DELIVERED result per notification, per-chat order kept at the provider, no 429,
 * no 1-second window above the provider's global limit, and the processes' {@code /metrics} agree.
 * The schema registry and the fake Telegram run in-process in both variants (they are test doubles).
 */
final class EndToEndScenario {
    static final String BOT = "alerts";
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456789");
    private static final int SENDERS = 3;

    /** Where to run: a Kafka bootstrap address and a Redis URL. */
    record Infrastructure(String bootstrapServers, String redisUrl) {
    }

    /**
     * @param messages notifications in total (a multiple of {@code chats})
     * @param providerPerSecond the fake provider's per-bot limit (scaled Telegram: 30/s)
     * @param chatPerSecond the fake provider's per-chat rate (scaled Telegram: 1/s), burst 3
     */
    record Size(int messages, int chats, int providerPerSecond, double chatPerSecond, Duration timeout) {
        double budgetPerSecond() {
            return providerPerSecond * 0.9; // margin for network jitter between decision and arrival
        }
    }

    /** What the run measured, for the log line of each variant. */
    record Outcome(long elapsedMs, int maxPerSecond, double sendRatePerSecond) {
    }

    private final HttpClient http = HttpClient.newHttpClient();

    Outcome run(Infrastructure infra, Size size) throws Exception {
        AvroTrust.ensure();
        assertThat(size.messages() % size.chats()).isZero();
        Topics topics = Topics.defaults();
        List<AutoCloseable> closeables = new ArrayList<>();
        Path stateDir = Files.createTempDirectory("sluice-e2e-streams");
        try {
            InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();
            closeables.add(registry);
            FakeTelegram telegram = FakeTelegram.builder().threads(64)
                    .limits(FakeTelegramLimits.telegram().withGlobalPerSecond(size.providerPerSecond())
                            .withChatPerSecond(size.chatPerSecond()).withChatBurst(3))
                    .start();
            closeables.add(telegram);
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers()))) {
                TopicBootstrap.ensureTopics(admin, topics, 6, (short) 1);
            }
            Settings common = Settings.of(Map.of("bootstrap.servers", infra.bootstrapServers(),
                    "schema.registry.url", registry.url()));
            Settings ops = Settings.of(Map.of("ops.port", "0", "ops.bind.address", "127.0.0.1"));

            ProcessOps topologyOps = ProcessOps.create("topology", ops, 0);
            closeables.add(topologyOps);
            closeables.add(TopologyCommand.start(TopologyConfig.from(common.with("application.id", "sluice-e2e")
                    .with("state.dir", stateDir.toString()).with("commit.interval.ms", "100")), topologyOps));
            List<ProcessOps> senderOps = new ArrayList<>();
            for (int i = 1; i <= SENDERS; i++) {
                ProcessOps o = ProcessOps.create("sender", ops, 0);
                closeables.add(o);
                senderOps.add(o);
                SenderService sender = new SenderService(SenderConfig.from(common
                        .with("sender.instance.id", "sender-" + i)
                        .with("telegram.api.url", telegram.apiUrl())
                        .with("bot." + BOT + ".token", TOKEN)
                        .with("budget.mode", "redis")
                        .with("redis.url", infra.redisUrl())
                        .with("budget.global.rate.per.s", Double.toString(size.budgetPerSecond()))
                        .with("budget.global.burst", "1")
                        .with("budget.chat.rate.per.s", Double.toString(size.chatPerSecond() * 0.9))
                        .with("budget.chat.burst", "2")
                        .with("sender.commit.interval.ms", "200")), o.registry());
                closeables.add(sender);
                o.serve(HealthCheck.alwaysUp(), HealthCheck.alwaysUp());
                sender.start();
            }
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                    .until(() -> get(topologyOps, "/health/ready").statusCode() == 200);

            long start = System.currentTimeMillis();
            CachedSchemaRegistryClient client = new CachedSchemaRegistryClient(registry.url());
            produce(infra, client, topics.notifications(), size);
            Map<String, Integer> resultsPerId = awaitResults(infra, client, topics.deliveryResults(), size);
            long elapsed = System.currentTimeMillis() - start;

            // exactly one result per notification, every one DELIVERED (checked in awaitResults), once each
            assertThat(resultsPerId).hasSize(size.messages());
            assertThat(resultsPerId.values()).allMatch(n -> n == 1);
            // each message accepted once by the provider, in order per chat
            List<FakeTelegramAccepted> accepted = telegram.accepted();
            assertThat(accepted).hasSize(size.messages());
            Map<String, List<Integer>> perChat = new HashMap<>();
            accepted.stream().sorted(Comparator.comparingLong(FakeTelegramAccepted::acceptedAtMillis)
                            .thenComparingLong(FakeTelegramAccepted::messageId))
                    .forEach(a -> perChat.computeIfAbsent(a.chatId(), c -> new ArrayList<>()).add(seqOf(a.text())));
            int perChatCount = size.messages() / size.chats();
            assertThat(perChat).hasSize(size.chats());
            perChat.forEach((chat, seqs) -> assertThat(seqs).as("order in chat %s", chat)
                    .containsExactlyElementsOf(IntStream.range(0, perChatCount).boxed().toList()));
            // never above the provider's limits
            assertThat(telegram.rejected429Count()).as("429 answers").isZero();
            int maxPerSecond = telegram.maxBotMessagesPer(Duration.ofSeconds(1));
            assertThat(maxPerSecond).isLessThanOrEqualTo(size.providerPerSecond());

            // the processes' /metrics tell the same story
            String topologyMetrics = get(topologyOps, "/metrics").body();
            assertThat(MetricsCheck.sum(topologyMetrics, "sluice_topology_outbound_total")).isEqualTo(size.messages());
            double delivered = 0;
            for (ProcessOps o : senderOps) {
                delivered += MetricsCheck.sum(get(o, "/metrics").body(), "sluice_sender_results_total", "status=\"DELIVERED\"");
            }
            assertThat(delivered).isEqualTo(size.messages());

            long first = accepted.stream().mapToLong(FakeTelegramAccepted::acceptedAtMillis).min().orElseThrow();
            long last = accepted.stream().mapToLong(FakeTelegramAccepted::acceptedAtMillis).max().orElseThrow();
            return new Outcome(elapsed, maxPerSecond, size.messages() * 1000.0 / Math.max(1, last - first));
        } finally {
            for (int i = closeables.size() - 1; i >= 0; i--) {
                try {
                    closeables.get(i).close();
                } catch (Exception e) {
                    // best effort: the next one still closes
                }
            }
        }
    }

    private static void produce(Infrastructure infra, CachedSchemaRegistryClient client, String topic, Size size) {
        Map<String, Object> p = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.LINGER_MS_CONFIG, 10);
        Instant now = Instant.now();
        try (KafkaProducer<String, Notification> producer = new KafkaProducer<>(p, new StringSerializer(),
                new SpecificAvroSerde<>(client, Notification.class).serializer())) {
            for (int seq = 0; seq < size.messages() / size.chats(); seq++) {
                for (int c = 0; c < size.chats(); c++) {
                    String chat = Integer.toString(700_000 + c);
                    producer.send(new ProducerRecord<>(topic, chat, Notification.newBuilder()
                            .setId("e2e-" + chat + "-" + seq).setBotId(BOT).setChatId(chat).setKind("meeting.reminder")
                            .setEventClass(NotificationClass.CRITICAL).setText("reminder for " + chat + " #" + seq)
                            .setCreatedAt(now).setExpiresAt(now.plus(Duration.ofMinutes(10))).build()));
                }
            }
            producer.flush();
        }
    }

    /** Reads delivery.results until every id has one; then one more short poll so duplicates would show. */
    private static Map<String, Integer> awaitResults(Infrastructure infra, CachedSchemaRegistryClient client, String topic, Size size) {
        Map<String, Integer> count = new HashMap<>();
        Map<String, Object> c = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "e2e-results-" + System.nanoTime(), ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaConsumer<String, DeliveryResult> consumer = new KafkaConsumer<>(c, new StringDeserializer(),
                new SpecificAvroSerde<>(client, DeliveryResult.class).deserializer())) {
            consumer.subscribe(List.of(topic));
            await().atMost(size.timeout()).pollInterval(Duration.ofMillis(100)).until(() -> {
                take(consumer.poll(Duration.ofMillis(200)), count);
                return count.size() >= size.messages();
            });
            take(consumer.poll(Duration.ofSeconds(1)), count);
        }
        return count;
    }

    private static void take(Iterable<ConsumerRecord<String, DeliveryResult>> records, Map<String, Integer> count) {
        for (ConsumerRecord<String, DeliveryResult> r : records) {
            assertThat(r.value().getStatus()).as("result of %s: %s", r.value().getMessageId(), r.value().getReason())
                    .isEqualTo(DeliveryStatus.DELIVERED);
            assertThat(r.key()).isEqualTo(r.value().getChatId());
            count.merge(r.value().getMessageId(), 1, Integer::sum);
        }
    }

    private static int seqOf(String text) {
        return Integer.parseInt(text.substring(text.lastIndexOf('#') + 1));
    }

    private HttpResponse<String> get(ProcessOps ops, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ops.port() + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

}
