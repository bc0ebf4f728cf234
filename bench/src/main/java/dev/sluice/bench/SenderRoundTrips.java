package dev.sluice.bench;

import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.config.Settings;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.sender.SenderConfig;
import dev.sluice.sender.SenderService;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.testkit.RedisInstance;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Redis round trips per delivered message through the real sender: an embedded Kafka broker, the in-process
 * schema registry, FakeTelegram with Telegram's limits and {@code senders} {@link SenderService} instances in
 * production wiring (ResilientBudget + RedisSentMarks on the given redis-server) drain a backlog of one bot,
 * demo-shaped (the demo's 3 senders, budget 25/s, chat burst 2). Round trips are counted twice: by the
 * senders' own {@code sluice.redis.round.trips} counters (per client: budget script calls, sent-mark reads
 * and writes) and by redis-server ({@code INFO commandstats}: top-level EVALSHA/EVAL/GET/SET/MGET calls).
 */
final class SenderRoundTrips {
    private SenderRoundTrips() {
    }

    static final String BOT = "rtbot";

    record Result(long reservationMs, int senders, int chats, int perChat, long delivered, long budgetTrips, long markReads,
                  long markWrites, long serverEvalsha, double seconds, int maxProviderPerSecond, long provider429,
                  Map<String, Long> refusalsByLimit) {
        /** Round trips on the way to the provider call: budget decisions, sent-mark checks included. */
        double decisionTripsPerDelivered() {
            return (budgetTrips + markReads) / (double) delivered;
        }

        /** Every Redis round trip of the senders, the sent-mark writes after the call included. */
        double allTripsPerDelivered() {
            return (budgetTrips + markReads + markWrites) / (double) delivered;
        }
    }

    static Result run(RedisInstance redis, int senders, int chats, int perChat, double ratePerS, long reservationMs)
            throws Exception {
        try (EmbeddedKafka kafka = EmbeddedKafka.start();
             InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();
             FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram());
             CommandStats stats = new CommandStats(redis.url())) {
            String prefix = "rt" + System.nanoTime();
            String live = prefix + ".outbox.live";
            kafka.createTopics(6, live, prefix + ".outbox.backfill", prefix + ".delivery.results", prefix + ".sender.status");
            awaitLeaders(kafka, live);
            String token = "1234567" + ":" + "AAbenchroundtripsbenchroundtrips00";
            produce(kafka, registry, live, prefix, chats, perChat);

            Map<String, Long> before = stats.topLevelCalls();
            List<SenderService> running = new ArrayList<>();
            List<SimpleMeterRegistry> registries = new ArrayList<>();
            long start = System.nanoTime();
            try {
                for (int i = 0; i < senders; i++) {
                    Map<String, String> s = new LinkedHashMap<>();
                    s.put("bootstrap.servers", kafka.bootstrapServers());
                    s.put("schema.registry.url", registry.url());
                    s.put("sender.group.id", prefix + "-senders");
                    s.put("sender.instance.id", "sender-" + (i + 1));
                    s.put("topic.outbox.live", live);
                    s.put("topic.outbox.backfill", prefix + ".outbox.backfill");
                    s.put("topic.delivery.results", prefix + ".delivery.results");
                    s.put("topic.sender.status", prefix + ".sender.status");
                    s.put("telegram.api.url", telegram.apiUrl());
                    s.put("bot." + BOT + ".token", token);
                    s.put("redis.url", redis.url());
                    s.put("budget.global.rate.per.s", Double.toString(ratePerS));
                    s.put("budget.chat.burst", "2");
                    s.put("budget.reservation.max.ms", Long.toString(reservationMs));
                    s.put("sender.commit.interval.ms", "200");
                    SimpleMeterRegistry meters = new SimpleMeterRegistry();
                    SenderService sender = new SenderService(SenderConfig.from(Settings.of(s)), meters);
                    running.add(sender);
                    registries.add(meters);
                    sender.start();
                }
                int total = chats * perChat;
                long deadline = System.nanoTime() + Duration.ofSeconds(60 + (long) (3 * total / ratePerS)).toNanos();
                while (telegram.accepted().size() < total) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("only " + telegram.accepted().size() + " of " + total
                                + " delivered in time");
                    }
                    LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
                }
            } finally {
                for (SenderService s : running) {
                    s.close();
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            Map<String, Long> after = stats.topLevelCalls();
            long budget = 0;
            long reads = 0;
            long writes = 0;
            for (SimpleMeterRegistry meters : registries) {
                budget += (long) counter(meters, "budget");
                reads += (long) counter(meters, "sent_marks_read");
                writes += (long) counter(meters, "sent_marks_write");
            }
            // commandstats counts calls made inside scripts too; EVALSHA/EVAL can only be top-level calls
            long evalsha = delta(before, after, "evalsha") + delta(before, after, "eval");
            Map<String, Long> refusals = new java.util.TreeMap<>();
            for (SimpleMeterRegistry meters : registries) {
                meters.find(dev.sluice.metrics.SluiceMetrics.BUDGET_REFUSALS).counters().forEach(c ->
                        refusals.merge(c.getId().getTag("limit"), (long) c.count(), Long::sum));
            }
            return new Result(reservationMs, senders, chats, perChat, telegram.accepted().size(), budget, reads, writes, evalsha,
                    seconds, telegram.maxBotMessagesPer(Duration.ofSeconds(1)), telegram.rejected429Count(), refusals);
        }
    }

    private static long delta(Map<String, Long> before, Map<String, Long> after, String command) {
        return after.getOrDefault(command, 0L) - before.getOrDefault(command, 0L);
    }

    private static double counter(SimpleMeterRegistry meters, String client) {
        FunctionCounter c = meters.find(SenderService.REDIS_ROUND_TRIPS).tag("client", client).functionCounter();
        return c == null ? 0 : c.count();
    }

    /** Message ids are unique per run: the sent marks of an earlier run in the same Redis must not match. */
    private static void produce(EmbeddedKafka kafka, InProcessSchemaRegistry registry, String topic, String run,
                                int chats, int perChat) {
        SpecificAvroSerde<OutboundMessage> serde = new SpecificAvroSerde<>(
                new CachedSchemaRegistryClient(registry.url()), OutboundMessage.class);
        Map<String, Object> pp = new HashMap<>();
        pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        pp.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        Instant now = Instant.now();
        try (KafkaProducer<String, OutboundMessage> p = new KafkaProducer<>(pp, new StringSerializer(), serde.serializer())) {
            for (int n = 0; n < perChat; n++) {
                for (int c = 0; c < chats; c++) {
                    String chat = Integer.toString(500_000 + c);
                    OutboundMessage m = OutboundMessage.newBuilder().setId(run + "-" + c + "-" + n).setBotId(BOT)
                            .setChatId(chat).setKind("bench").setEventClass(NotificationClass.ROUTINE)
                            .setText("round trips " + c + "/" + n).setCreatedAt(now).setDueAt(now).build();
                    p.send(new ProducerRecord<>(topic, chat, m));
                }
            }
            p.flush();
        }
    }

    private static void awaitLeaders(EmbeddedKafka kafka, String topic) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try {
                var d = kafka.admin().describeTopics(List.of(topic)).allTopicNames().get().get(topic);
                if (d.partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty())) {
                    return;
                }
            } catch (java.util.concurrent.ExecutionException e) {
                // not there yet
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("topic " + topic + " has no leader after 30 s");
            }
            Thread.sleep(50); // a bounded poll of the broker's metadata, not a wait for the result
        }
    }
}
