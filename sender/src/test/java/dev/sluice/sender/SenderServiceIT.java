package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.config.Settings;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import dev.sluice.testkit.TelegramBehaviour;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** One sender against the embedded broker, a real redis-server and FakeTelegram: outcomes, offsets, backpressure. */
class SenderServiceIT {
    private static final String BOT = "alerts";
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456789");
    private static EmbeddedKafka kafka;
    private static RedisInstance redis;
    private static InProcessSchemaRegistry registry;
    private static FakeTelegram telegram;

    @BeforeAll
    static void startInfrastructure() {
        kafka = EmbeddedKafka.start();
        redis = RedisLauncher.start();
        registry = InProcessSchemaRegistry.start();
        telegram = FakeTelegram.start(FakeTelegramLimits.telegram().withGlobalPerSecond(200));
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

    private static Settings settings(String prefix, String group) {
        return Settings.of(Map.ofEntries(
                Map.entry("bootstrap.servers", kafka.bootstrapServers()),
                Map.entry("schema.registry.url", registry.url()),
                Map.entry("sender.group.id", group),
                Map.entry("sender.instance.id", group + "-1"),
                Map.entry("topic.outbox.live", prefix + ".outbox.live"),
                Map.entry("topic.outbox.backfill", prefix + ".outbox.backfill"),
                Map.entry("topic.delivery.results", prefix + ".delivery.results"),
                Map.entry("telegram.api.url", telegram.apiUrl()),
                Map.entry("bot." + BOT + ".token", TOKEN),
                Map.entry("redis.url", redis.url()),
                Map.entry("budget.global.rate.per.s", "150"),
                Map.entry("sender.commit.interval.ms", "100"),
                Map.entry("sender.retry.backoff.ms", "100"),
                Map.entry("sender.request.timeout.ms", "5000")));
    }

    private static OutboundMessage message(String id, String chat, Instant expiresAt) {
        Instant now = Instant.now();
        return OutboundMessage.newBuilder().setId(id).setBotId(BOT).setChatId(chat).setKind("test")
                .setEventClass(NotificationClass.CRITICAL).setText("msg " + id).setCreatedAt(now).setDueAt(now)
                .setExpiresAt(expiresAt).build();
    }

    private static void produce(String topic, List<OutboundMessage> messages) {
        SpecificAvroSerde<OutboundMessage> serde = new SpecificAvroSerde<>(
                new CachedSchemaRegistryClient(registry.url()), OutboundMessage.class);
        Map<String, Object> pp = new HashMap<>();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, OutboundMessage> p = new KafkaProducer<>(pp, new StringSerializer(), serde.serializer())) {
            messages.forEach(m -> p.send(new ProducerRecord<>(topic, m.getChatId(), m)));
            p.flush();
        }
    }

    private static Map<String, DeliveryResult> awaitResults(String topic, int expected, Duration bound) {
        SpecificAvroSerde<DeliveryResult> serde = new SpecificAvroSerde<>(
                new CachedSchemaRegistryClient(registry.url()), DeliveryResult.class);
        Map<String, Object> cp = new HashMap<>();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, topic + "-reader");
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        Map<String, DeliveryResult> results = new ConcurrentHashMap<>();
        AtomicInteger count = new AtomicInteger();
        try (KafkaConsumer<String, DeliveryResult> c = new KafkaConsumer<>(cp, new StringDeserializer(), serde.deserializer())) {
            c.subscribe(List.of(topic));
            await().atMost(bound).pollInterval(Duration.ofMillis(100)).until(() -> {
                for (ConsumerRecord<String, DeliveryResult> r : c.poll(Duration.ofMillis(100))) {
                    results.put(r.value().getMessageId(), r.value());
                    count.incrementAndGet();
                }
                return results.size() >= expected;
            });
            c.poll(Duration.ofMillis(500)).forEach(r -> count.incrementAndGet());
        }
        assertThat(count.get()).as("one result per message, no duplicates").isEqualTo(expected);
        return results;
    }

    @Test
    void every_provider_answer_ends_in_one_result_a_429_parks_only_its_chat_and_offsets_pass_finished_messages()
            throws Exception {
        String prefix = "outcomes";
        kafka.createTopics(3, prefix + ".outbox.live", prefix + ".outbox.backfill", prefix + ".delivery.results");
        TopicsReady.await(kafka, prefix + ".outbox.live", prefix + ".outbox.backfill", prefix + ".delivery.results");
        telegram.enqueueForChat("701", TelegramBehaviour.tooManyRequests(Duration.ofSeconds(2)));
        telegram.blockChat("702");
        telegram.enqueueForChat("703", TelegramBehaviour.chatNotFound());
        telegram.enqueueForChat("704", TelegramBehaviour.serverError(502));

        List<OutboundMessage> msgs = new java.util.ArrayList<>(List.of(
                message("x0", "701", null), message("x1", "701", null), message("b0", "702", null),
                message("n0", "703", null), message("s0", "704", null),
                message("e0", "705", Instant.now().minusSeconds(1))));
        for (int i = 0; i < 40; i++) {
            msgs.add(message("c" + i, Integer.toString(800 + i), null));
        }
        try (SenderService sender = new SenderService(SenderConfig.from(settings(prefix, prefix + "-group")),
                new SimpleMeterRegistry())) {
            sender.start();
            produce(prefix + ".outbox.live", msgs);
            Map<String, DeliveryResult> results = awaitResults(prefix + ".delivery.results", msgs.size(),
                    Duration.ofSeconds(30));

            assertThat(results.get("x0").getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
            assertThat(results.get("x0").getAttempts()).isEqualTo(2);
            assertThat(results.get("x1").getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
            assertThat(results.get("b0").getStatus()).isEqualTo(DeliveryStatus.BLOCKED);
            assertThat(results.get("b0").getErrorCode()).isEqualTo(403);
            assertThat(results.get("n0").getStatus()).isEqualTo(DeliveryStatus.FAILED);
            assertThat(results.get("n0").getReason()).containsIgnoringCase("chat not found");
            assertThat(results.get("s0").getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
            assertThat(results.get("s0").getAttempts()).isEqualTo(2);
            assertThat(results.get("e0").getStatus()).isEqualTo(DeliveryStatus.EXPIRED);
            assertThat(results.get("e0").getAttempts()).isZero();
            assertThat(Meters.rateLimited(sender)).isEqualTo(1);

            // the 429 parked chat 701 alone: its retry came >= 2 s after the 429, the others did not wait
            List<FakeTelegramAccepted> x = telegram.acceptedFor("701");
            assertThat(x).extracting(FakeTelegramAccepted::text).containsExactly("msg x0", "msg x1");
            long lastOther = telegram.accepted().stream().filter(a -> a.text().startsWith("msg c"))
                    .mapToLong(FakeTelegramAccepted::acceptedAtMillis).max().orElseThrow();
            assertThat(lastOther).as("other chats were served before 701's penalty ended")
                    .isLessThan(x.get(0).acceptedAtMillis());
            long sentAt = results.get("x0").getSentAt().toEpochMilli();
            long dueAt = results.get("x0").getDueAt().toEpochMilli();
            assertThat(sentAt - dueAt).isGreaterThanOrEqualTo(2000);

            // every message has its result, so the committed offsets reach the end of each partition
            Set<TopicPartition> partitions = Set.of(0, 1, 2).stream()
                    .map(p -> new TopicPartition(prefix + ".outbox.live", p)).collect(Collectors.toSet());
            Map<TopicPartition, OffsetSpec> latest = partitions.stream()
                    .collect(Collectors.toMap(tp -> tp, tp -> OffsetSpec.latest()));
            Map<TopicPartition, Long> ends = new HashMap<>();
            kafka.admin().listOffsets(latest).all().get().forEach((tp, info) -> ends.put(tp, info.offset()));
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                Map<TopicPartition, OffsetAndMetadata> committed = kafka.admin()
                        .listConsumerGroupOffsets(prefix + "-group").partitionsToOffsetAndMetadata().get();
                ends.forEach((tp, end) -> {
                    if (end > 0) {
                        assertThat(committed.get(tp)).as("committed offset of %s", tp).isNotNull();
                        assertThat(committed.get(tp).offset()).as("committed offset of %s", tp).isEqualTo(end);
                    }
                });
            });
        }
    }

    @Test
    void buffered_records_stay_bounded_the_partitions_pause_and_resume_and_nothing_is_lost() throws Exception {
        String prefix = "backpressure";
        kafka.createTopics(2, prefix + ".outbox.live", prefix + ".outbox.backfill", prefix + ".delivery.results");
        TopicsReady.await(kafka, prefix + ".outbox.live", prefix + ".outbox.backfill", prefix + ".delivery.results");
        List<OutboundMessage> msgs = new java.util.ArrayList<>();
        for (int i = 0; i < 300; i++) {
            msgs.add(message("p" + i, Integer.toString(9000 + i), null));
        }
        produce(prefix + ".outbox.live", msgs);
        Settings s = settings(prefix, prefix + "-group")
                .with("sender.buffer.max.records", "40")
                .with("budget.global.rate.per.s", "150");
        AtomicInteger maxBuffered = new AtomicInteger();
        AtomicBoolean sampling = new AtomicBoolean(true);
        try (SenderService sender = new SenderService(SenderConfig.from(s), new SimpleMeterRegistry())) {
            Thread sampler = new Thread(() -> {
                while (sampling.get()) {
                    maxBuffered.accumulateAndGet(sender.bufferedRecords(), Math::max);
                    java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
                }
            });
            sampler.start();
            sender.start();
            Map<String, DeliveryResult> results = awaitResults(prefix + ".delivery.results", msgs.size(),
                    Duration.ofSeconds(30));
            sampling.set(false);
            sampler.join();
            assertThat(results.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
            assertThat(maxBuffered.get()).as("buffered records").isLessThanOrEqualTo(40).isGreaterThanOrEqualTo(20);
            assertThat(Meters.pauses(sender)).as("the partitions were paused (and so resumed: all got through)")
                    .isPositive();
        }
    }

    @Test
    void a_partition_handed_over_mid_run_sends_nothing_twice_and_loses_nothing() {
        String prefix = "handover";
        kafka.createTopics(4, prefix + ".outbox.live", prefix + ".outbox.backfill", prefix + ".delivery.results");
        TopicsReady.await(kafka, prefix + ".outbox.live", prefix + ".outbox.backfill", prefix + ".delivery.results");
        List<OutboundMessage> msgs = new java.util.ArrayList<>();
        for (int i = 0; i < 400; i++) {
            msgs.add(message("h" + i, Integer.toString(20_000 + i), null));
        }
        // A 429 early in every partition holds its committed offset while later chats finish above it:
        // whichever partitions move, the new owner must skip those and honour what remains of the penalty.
        for (int i = 0; i < 8; i++) {
            telegram.enqueueForChat(Integer.toString(20_000 + i), TelegramBehaviour.tooManyRequests(Duration.ofSeconds(8)));
        }
        produce(prefix + ".outbox.live", msgs);
        // Eight chats answered 429 within a second would be read as one bot-wide penalty (RateLimitAttribution);
        // this test is about per-chat penalties across a hand-over, so that inference is switched off here.
        Settings base = settings(prefix, prefix + "-group").with("budget.global.rate.per.s", "60")
                .with("sender.penalty.bot.min.chats", "1000");
        try (SenderService first = new SenderService(SenderConfig.from(base.with("sender.instance.id", "handover-1")),
                new SimpleMeterRegistry())) {
            first.start();
            // hand over once every penalised chat got its 429 (all partitions hold an offset) and before any
            // penalty ended
            await().atMost(Duration.ofSeconds(20)).until(() -> Meters.rateLimited(first) >= 8);
            try (SenderService second = new SenderService(
                    SenderConfig.from(base.with("sender.instance.id", "handover-2")), new SimpleMeterRegistry())) {
                second.start(); // the group rebalances: partitions move from first to second mid-run
                Map<String, DeliveryResult> results = awaitResults(prefix + ".delivery.results", msgs.size(),
                        Duration.ofSeconds(40));
                assertThat(results).hasSize(400);
                assertThat(Meters.delivered(second)).as("the second sender took over some work").isPositive();
                List<String> texts = telegram.accepted().stream()
                        .filter(a -> a.chatId().startsWith("2") && a.chatId().length() == 5)
                        .map(FakeTelegramAccepted::text).toList();
                assertThat(texts).hasSize(400).doesNotHaveDuplicates();
                for (int i = 0; i < 8; i++) {
                    DeliveryResult r = results.get("h" + i);
                    assertThat(r.getSentAt().toEpochMilli() - r.getDueAt().toEpochMilli())
                            .as("penalised chat %d waited out its 429 (also after a hand-over)", i)
                            .isGreaterThanOrEqualTo(8000);
                }
                assertThat(first.skippedAlreadyDone() + second.skippedAlreadyDone())
                        .as("records finished above a held offset were skipped by the new owner, not resent")
                        .isPositive();
                System.out.printf("handover: first delivered %d, second %d, skipped as already done %d%n",
                        Meters.delivered(first), Meters.delivered(second),
                        first.skippedAlreadyDone() + second.skippedAlreadyDone());
            }
        }
    }
}
