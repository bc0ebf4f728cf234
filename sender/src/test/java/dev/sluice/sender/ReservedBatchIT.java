package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.sender.budget.RedisGcraBudget;
import dev.sluice.sender.idempotency.InMemorySentMarks;
import dev.sluice.sender.provider.SendOutcome;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * Issue 19, item 3, against a real redis-server (the one on the PATH) and budget.lua: a burst of one bot's messages in
 * many chats, with reservations on (500 ms) and few in-flight places, is decided by few EVALSHA calls (counted by the
 * server, {@code INFO commandstats}): one call reserves the bot's next slots for the heads waiting together. The real
 * {@link Dispatcher} runs on its own thread with sending threads and the wall clock. Every message is sent once, each
 * chat in order, the bot's sends keep the global limit (30/s) and each chat's its own (1/s), both checked by the script.
 */
class ReservedBatchIT {
    private static final int CHATS = 24;
    private static final String[] CONFIG = {"budget.global.rate.per.s", "30", "budget.global.burst", "1",
            "budget.chat.rate.per.s", "1", "budget.chat.burst", "1", "budget.reservation.max.ms", "500",
            // the routine messages here reserve over the full horizon too (the routine default, 100 ms, is 3 slots)
            "budget.reservation.routine.max.ms", "500", "sender.max.in.flight", "2"};

    /** Sends recorded with their wall-clock time; any sending thread calls it. */
    private static final class Recording extends Fakes.ScriptedTransport {
        @Override
        public synchronized SendOutcome send(String botId, String chatId, String text, String parseMode) {
            return super.send(botId, chatId, text, parseMode);
        }

        synchronized List<String> sentCopy() {
            return List.copyOf(sent);
        }

        synchronized List<Long> sentAtCopy() {
            return List.copyOf(sentAt);
        }
    }

    /** Results written; any sending thread emits. */
    private static final class Results implements ResultSink {
        final List<DeliveryResult> results = new ArrayList<>();

        @Override
        public synchronized void emit(PendingMessage message, DeliveryResult result) {
            results.add(result);
        }

        @Override
        public synchronized void alreadyFinished(PendingMessage message) {
        }

        synchronized int size() {
            return results.size();
        }

        synchronized long delivered() {
            return results.stream().filter(r -> r.getStatus() == DeliveryStatus.DELIVERED).count();
        }
    }

    @Test
    void a_burst_of_one_bots_heads_is_decided_by_few_budget_calls_with_every_limit_kept() throws Exception {
        Clock clock = Clock.systemUTC();
        SenderConfig config = Fakes.config(CONFIG);
        Recording transport = new Recording();
        transport.clockMs = c -> clock.millis();
        Results sink = new Results();
        TopicPartition tp = new TopicPartition("outbox.live", 0);
        ExecutorService senders = Executors.newFixedThreadPool(config.maxInFlight());
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             RedisGcraBudget budget = new RedisGcraBudget(redis.url(), config.budgetConfig(), Duration.ofSeconds(2))) {
            RedisClient client = RedisClient.create(redis.url());
            try (StatefulRedisConnection<String, String> admin = client.connect()) {
                BotSlots slots = new BotSlots(8);
                DeliveryProcessor processor = new DeliveryProcessor(config, budget, transport, sink,
                        new InMemorySentMarks(Duration.ofDays(1), clock), Fakes.metrics(new SimpleMeterRegistry()), clock,
                        new SplittableRandom(5), slots, new ChatRegistry(1000));
                Lanes lanes = new Lanes(new LaneScheduler<PendingMessage>(processor::isUrgent,
                        PendingMessage::waitsForTurnOnly, PendingMessage::batchBot, PendingMessage::holdsReservation));
                Dispatcher dispatcher = new Dispatcher(lanes, processor, slots, senders, clock, config);
                slots.onRelease(dispatcher::slotReleased);
                budget.tryAcquire(dev.sluice.sender.budget.BudgetRequest.live("warmup", "1")); // NOSCRIPT's EVAL
                long evalshaBefore = evalsha(admin);

                // the burst: one message in each of CHATS chats, and a second one in chats c0 and c1
                long t0 = clock.millis();
                int messages = 0;
                for (int c = 0; c < CHATS; c++) {
                    lanes.add(new PendingMessage(tp, messages++, Fakes.message("m" + c, "c" + c, clock.instant(), null)), t0);
                }
                for (int c = 0; c < 2; c++) {
                    lanes.add(new PendingMessage(tp, messages++, Fakes.message("n" + c, "c" + c, clock.instant(), null)), t0);
                }
                Thread dispatch = new Thread(dispatcher, "dispatch");
                dispatch.start();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (sink.size() < messages && System.nanoTime() < deadline) {
                    Thread.sleep(20); // polling a condition, bounded by the deadline
                }
                lanes.stopDispatching();
                dispatch.join(5_000);
                long calls = evalsha(admin) - evalshaBefore;

                assertThat(sink.size()).as("every message has its result").isEqualTo(messages);
                assertThat(sink.delivered()).isEqualTo(messages);
                List<String> sent = transport.sentCopy();
                List<Long> at = transport.sentAtCopy();
                assertThat(sent).as("each message sent once").hasSize(messages).doesNotHaveDuplicates();
                // the budget decided the 26 messages with far fewer calls than one per message
                System.out.printf("ReservedBatchIT: %d EVALSHA calls for %d messages%n", calls, messages);
                assertThat(calls).as("EVALSHA calls for %d messages", messages).isLessThanOrEqualTo(messages / 2);
                // the global limit (30/s, burst 1): each send is at or after its slot and at most one interval late
                // (budget.reservation.late.max.ms by default; later, the slot passes unused), so k sends later than a
                // send are at least k intervals of 33.3 ms less that one interval after it
                List<Long> sorted = new ArrayList<>(at);
                sorted.sort(null);
                for (int i = 0; i < sorted.size(); i++) {
                    for (int j = i + 1; j < sorted.size(); j++) {
                        assertThat(sorted.get(j) - sorted.get(i)).as("sends %d and %d", i, j)
                                .isGreaterThanOrEqualTo((j - i) * 100_000L / 3_000 - 34);
                    }
                }
                // each chat in order, and its own limit (1/s) between its two sends
                Map<String, List<Integer>> byChat = new HashMap<>();
                for (int i = 0; i < sent.size(); i++) {
                    byChat.computeIfAbsent(sent.get(i).substring(0, sent.get(i).indexOf('/')), k -> new ArrayList<>()).add(i);
                }
                for (int c = 0; c < 2; c++) {
                    List<Integer> idx = byChat.get("c" + c);
                    assertThat(idx).hasSize(2);
                    assertThat(sent.get(idx.get(0))).isEqualTo("c" + c + "/text m" + c);
                    assertThat(sent.get(idx.get(1))).isEqualTo("c" + c + "/text n" + c);
                    assertThat(at.get(idx.get(1)) - at.get(idx.get(0))).as("chat c%d 1/s", c).isGreaterThanOrEqualTo(999);
                }
            } finally {
                client.shutdown();
            }
        } finally {
            senders.shutdownNow();
        }
    }

    private static long evalsha(StatefulRedisConnection<String, String> c) {
        for (String line : c.sync().info("commandstats").lines().toList()) {
            if (line.startsWith("cmdstat_evalsha:")) {
                String calls = line.substring(line.indexOf("calls=") + 6);
                return Long.parseLong(calls.substring(0, calls.indexOf(',')));
            }
        }
        return 0;
    }
}
