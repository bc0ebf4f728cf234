package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 2's acceptance test: three sender instances that share nothing but Redis (each its own
 * SenderService, consumer, producer and Redis connection) deliver 3,000 messages to 300 chats of one bot
 * through FakeTelegram: each once, in order per chat, no 429, no 1-second window above the provider's
 * global limit, and exactly one DeliveryResult per message. Rates are scaled ×10 (provider 300 msg/s,
 * shared budget 270 msg/s: the margin absorbs the network jitter between decision and arrival).
 */
class SharedBudgetIT {
    private static final String BOT = "alerts";
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456789");
    private static final int CHATS = 300;
    private static final int PER_CHAT = 10;
    private static final int PROVIDER_GLOBAL_PER_S = 300;

    private static EmbeddedKafka kafka;
    private static RedisInstance redis;
    private static InProcessSchemaRegistry registry;
    private static FakeTelegram telegram;
    private static final Topics topics = Topics.defaults();

    @BeforeAll
    static void startInfrastructure() {
        kafka = EmbeddedKafka.start();
        kafka.createTopics(6, topics.outboxLive(), topics.outboxBackfill());
        kafka.createTopics(3, topics.deliveryResults());
        TopicsReady.await(kafka, topics.outboxLive(), topics.outboxBackfill(), topics.deliveryResults());
        redis = RedisLauncher.start();
        registry = InProcessSchemaRegistry.start();
        telegram = FakeTelegram.builder()
                .limits(FakeTelegramLimits.telegram().withGlobalPerSecond(PROVIDER_GLOBAL_PER_S)
                        .withChatPerSecond(2).withChatBurst(3))
                .threads(64)
                .start();
    }

    @AfterAll
    static void stopInfrastructure() {
        for (AutoCloseable c : new AutoCloseable[] {telegram, registry, redis, kafka}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                // best effort
            }
        }
    }

    private static SenderConfig senderConfig(int n) {
        return SenderConfig.from(settings(n));
    }

    private static Settings settings(int n) {
        return Settings.of(Map.ofEntries(
                Map.entry("bootstrap.servers", kafka.bootstrapServers()),
                Map.entry("schema.registry.url", registry.url()),
                Map.entry("sender.instance.id", "sender-" + n),
                Map.entry("telegram.api.url", telegram.apiUrl()),
                Map.entry("bot." + BOT + ".token", TOKEN),
                Map.entry("budget.mode", "redis"),
                Map.entry("redis.url", redis.url()),
                Map.entry("budget.global.rate.per.s", "270"),
                Map.entry("budget.global.burst", "1"),
                Map.entry("budget.chat.rate.per.s", "1.8"),
                Map.entry("budget.chat.burst", "2"),
                Map.entry("sender.max.in.flight", "16"),
                Map.entry("sender.buffer.max.records", "2000"),
                Map.entry("sender.commit.interval.ms", "200"),
                Map.entry("sender.request.timeout.ms", "5000")));
    }

    @Test
    void three_senders_sharing_only_redis_deliver_every_message_once_in_order_within_the_global_limit() {
        List<SenderService> senders = new ArrayList<>();
        Map<String, DeliveryResult> results = new ConcurrentHashMap<>();
        Map<String, Integer> resultCount = new ConcurrentHashMap<>();
        telegram.reset();
        try {
            for (int i = 1; i <= 3; i++) {
                SenderService s = new SenderService(senderConfig(i), new SimpleMeterRegistry());
                senders.add(s);
                s.start();
            }
            long startMs = System.currentTimeMillis();
            produce(topics.outboxLive(), PER_CHAT);

            CachedSchemaRegistryClient client = new CachedSchemaRegistryClient(registry.url());
            SpecificAvroSerde<DeliveryResult> resultSerde = new SpecificAvroSerde<>(client, DeliveryResult.class);
            Map<String, Object> cp = new HashMap<>();
            cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
            cp.put(ConsumerConfig.GROUP_ID_CONFIG, "shared-budget-it-results");
            cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            try (KafkaConsumer<String, DeliveryResult> consumer = new KafkaConsumer<>(cp, new StringDeserializer(),
                    resultSerde.deserializer())) {
                consumer.subscribe(List.of(topics.deliveryResults()));
                await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> {
                    for (ConsumerRecord<String, DeliveryResult> r : consumer.poll(Duration.ofMillis(200))) {
                        results.put(r.value().getMessageId(), r.value());
                        resultCount.merge(r.value().getMessageId(), 1, Integer::sum);
                        assertThat(r.key()).isEqualTo(r.value().getChatId());
                    }
                    return results.size() >= CHATS * PER_CHAT;
                });
                long elapsedMs = System.currentTimeMillis() - startMs;

                // every message delivered once, in order per chat
                List<FakeTelegramAccepted> accepted = telegram.accepted();
                assertThat(accepted).hasSize(CHATS * PER_CHAT);
                Map<String, List<Integer>> perChat = new HashMap<>();
                for (FakeTelegramAccepted a : accepted) {
                    perChat.computeIfAbsent(a.chatId(), c -> new ArrayList<>()).add(seqOf(a.text()));
                }
                assertThat(perChat).hasSize(CHATS);
                perChat.forEach((chat, seqs) -> assertThat(seqs).as("order in chat %s", chat)
                        .containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9));

                // never above the provider's limits: no 429, no 1-second window above the global limit
                assertThat(telegram.rejected429Count()).isZero();
                int maxPerSecond = telegram.maxBotMessagesPer(Duration.ofSeconds(1));
                assertThat(maxPerSecond).isLessThanOrEqualTo(PROVIDER_GLOBAL_PER_S);

                // exactly one DELIVERED result per message; give stragglers a moment to show duplicates
                for (ConsumerRecord<String, DeliveryResult> r : consumer.poll(Duration.ofSeconds(1))) {
                    resultCount.merge(r.value().getMessageId(), 1, Integer::sum);
                }
                assertThat(results).hasSize(CHATS * PER_CHAT);
                assertThat(resultCount.values()).allMatch(c -> c == 1);
                assertThat(results.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED
                        && r.getAttempts() == 1 && r.getSentAt() != null && r.getSenderInstance() != null);
                long instancesUsed = results.values().stream().map(DeliveryResult::getSenderInstance).distinct().count();
                assertThat(instancesUsed).as("all three senders took part").isEqualTo(3);
                long delivered = senders.stream().mapToLong(s -> Meters.delivered(s)).sum();
                assertThat(delivered).isEqualTo(CHATS * PER_CHAT);
                long first = accepted.stream().mapToLong(FakeTelegramAccepted::acceptedAtMillis).min().orElseThrow();
                long last = accepted.stream().mapToLong(FakeTelegramAccepted::acceptedAtMillis).max().orElseThrow();
                long refusals = senders.stream().mapToLong(Meters::refusals).sum();
                System.out.printf("SharedBudgetIT: %d messages, %d ms from start, %d ms first-to-last accept "
                                + "(%.0f msg/s); max %d in any 1 s at the provider; 0 x 429; budget calls per delivered %.2f%n",
                        accepted.size(), elapsedMs, last - first, accepted.size() * 1000.0 / (last - first),
                        maxPerSecond, (delivered + refusals) / (double) delivered);
                senders.forEach(s -> System.out.printf("SharedBudgetIT: %s refusals %d, results %d, skipped as done %d%n",
                        s.instanceId(), Meters.refusals(s), Meters.results(s), s.skippedAlreadyDone()));
            }
        } finally {
            senders.forEach(SenderService::close);
        }
    }

    private static int seqOf(String text) {
        return Integer.parseInt(text.substring(text.lastIndexOf('#') + 1));
    }

    private static void produce(String topic, int perChat) {
        CachedSchemaRegistryClient client = new CachedSchemaRegistryClient(registry.url());
        SpecificAvroSerde<OutboundMessage> serde = new SpecificAvroSerde<>(client, OutboundMessage.class);
        Map<String, Object> pp = new HashMap<>();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        pp.put(ProducerConfig.LINGER_MS_CONFIG, 10);
        try (KafkaProducer<String, OutboundMessage> producer = new KafkaProducer<>(pp, new StringSerializer(),
                serde.serializer())) {
            Instant now = Instant.now();
            for (int seq = 0; seq < perChat; seq++) {
                for (int c = 0; c < CHATS; c++) {
                    String chat = Integer.toString(100_000 + c);
                    OutboundMessage m = OutboundMessage.newBuilder()
                            .setId("m-" + chat + "-" + seq).setBotId(BOT).setChatId(chat).setKind("quake")
                            .setEventClass(NotificationClass.ROUTINE).setText("quake alert for " + chat + " #" + seq)
                            .setCreatedAt(now).setDueAt(now).build();
                    producer.send(new ProducerRecord<>(topic, chat, m));
                }
            }
            producer.flush();
        }
    }

    /**
     * The contrast the demo's {@code --budget local} shows: the same three senders, each with its own
     * in-process limiter at the full rate, together exceed what the provider accepts.
     */
    @Test
    void three_senders_with_local_budgets_exceed_the_provider_limit() {
        String prefix = "local";
        kafka.createTopics(6, prefix + ".outbox.live", prefix + ".outbox.backfill");
        kafka.createTopics(3, prefix + ".delivery.results");
        TopicsReady.await(kafka, prefix + ".outbox.live", prefix + ".outbox.backfill", prefix + ".delivery.results");
        telegram.reset();
        List<SenderService> senders = new ArrayList<>();
        try {
            for (int i = 1; i <= 3; i++) {
                Settings s = settings(i).with("budget.mode", "local").with("sender.group.id", "local-senders")
                        .with("topic.outbox.live", prefix + ".outbox.live")
                        .with("topic.outbox.backfill", prefix + ".outbox.backfill")
                        .with("topic.delivery.results", prefix + ".delivery.results");
                SenderService sender = new SenderService(SenderConfig.from(s), new SimpleMeterRegistry());
                senders.add(sender);
                sender.start();
            }
            produce(prefix + ".outbox.live", 5);
            await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofMillis(200)).until(() ->
                    telegram.rejected429Count() > 0 || telegram.maxBotMessagesPer(Duration.ofSeconds(1)) > PROVIDER_GLOBAL_PER_S);
            System.out.printf("SharedBudgetIT local: %d x 429, max %d in any 1 s at the provider (limit %d)%n",
                    telegram.rejected429Count(), telegram.maxBotMessagesPer(Duration.ofSeconds(1)), PROVIDER_GLOBAL_PER_S);
        } finally {
            senders.forEach(SenderService::close);
        }
    }

    /**
     * Senders that share the Redis but not the limits ({@code budget.limits.check}): a sender started with another
     * global rate under {@code refuse} does not start, naming the key, both values and the live sender it disagrees with;
     * one whose {@code bot.<id>.rate.per.s} is the same rate starts; under {@code warn} a sender with another chat burst
     * starts and counts the bot in {@code sluice_budget_limits_disagreeing_bots}.
     */
    @Test
    void a_sender_with_other_limits_is_refused_or_counted() {
        List<SenderService> senders = new ArrayList<>();
        try {
            SenderService first = new SenderService(senderConfig(1), new SimpleMeterRegistry());
            senders.add(first);
            first.start();
            SenderService refused = new SenderService(SenderConfig.from(settings(2).with("budget.global.rate.per.s", "100")
                    .with("budget.limits.check", "refuse")), new SimpleMeterRegistry());
            senders.add(refused);
            // sender-1's first round runs on its timer thread right after its start: wait until its field is written
            io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(redis.url());
            try (var c = client.connect()) {
                await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() ->
                        c.sync().hexists("sluice:{" + BOT + "}:limits", "sender-1"));
            } finally {
                client.shutdown();
            }
            assertThat(org.assertj.core.api.Assertions.catchThrowable(refused::start))
                    .isInstanceOf(dev.sluice.config.ConfigException.class)
                    .hasMessageContaining("budget.limits.check=refuse")
                    .hasMessageContaining("bot alerts: budget.global.rate.per.s=100 here, 270 at sender sender-1");
            refused.close(); // as SenderCommand does when the start fails: its field goes with it
            // the same 270 set by the bot's own key is the same limit: it starts under refuse
            SenderService samePerBot = new SenderService(SenderConfig.from(settings(4).with("bot." + BOT + ".rate.per.s",
                    "270").with("budget.limits.check", "refuse")), new SimpleMeterRegistry());
            senders.add(samePerBot);
            samePerBot.start();
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            SenderService warned = new SenderService(SenderConfig.from(settings(3).with("budget.chat.burst", "1")), meters);
            senders.add(warned);
            warned.start();
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).until(() ->
                    meters.get("sluice.budget.limits.disagreeing.bots").gauge().value() == 1.0);
        } finally {
            senders.forEach(SenderService::close);
        }
    }
}
