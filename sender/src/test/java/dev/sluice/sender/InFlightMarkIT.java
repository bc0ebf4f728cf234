package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.sender.budget.BudgetKeys;
import dev.sluice.sender.budget.RedisGcraBudget;
import dev.sluice.sender.idempotency.RedisSentMarks;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import io.lettuce.core.RedisClient;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 19 on a real redis-server, through the real {@link DeliveryProcessor} wired as production wires it
 * ({@link SenderWiring#foldMarkWrites}): the grant writes the message's in-flight mark in the budget's own call, the SENT
 * mark after the provider's answer rides on the bot's next budget call (no SET of its own), and a message read again
 * (after a kill -9 or a rebalance) is never sent again once the provider accepted it (SENT: its result is written
 * from the mark), while one left in flight is sent only when no result of it is on the results topic (a killed owner
 * may have been killed before its call: nothing is lost).
 */
class InFlightMarkIT {
    private static final long TTL_MS = Duration.ofHours(1).toMillis();
    private final TopicPartition tp = new TopicPartition("outbox.live", 0);
    private final Fakes.ScriptedTransport transport = new Fakes.ScriptedTransport();
    private final Fakes.RecordingSink sink = new Fakes.RecordingSink();
    private final List<String> lookups = new ArrayList<>();
    private final List<String> resultsOnTopic = new ArrayList<>();
    private RedisInstance redis;
    private RedisGcraBudget budget;
    private RedisSentMarks marks;
    private DeliveryProcessor processor;
    private RedisClient client;
    private StatefulRedisConnection<String, String> direct;

    @BeforeEach
    void start() {
        redis = RedisLauncher.localProcess().launch();
        SenderConfig config = Fakes.config("budget.global.rate.per.s", "1000", "budget.global.burst", "1000",
                "budget.chat.rate.per.s", "1000", "budget.chat.burst", "1000",
                "sender.sent.mark.ttl.ms", Long.toString(TTL_MS), "sender.sent.mark.flush.interval.ms", "3600000",
                // counts round trips: the guard (on by default) would add a report per answer (burst 1000: slack 0)
                "budget.arrival.guard.limit.per.s", "0");
        budget = new RedisGcraBudget(redis.url(), config.budgetConfig(), Duration.ofSeconds(2));
        marks = new RedisSentMarks(redis.url(), Duration.ofMillis(TTL_MS), Duration.ofSeconds(2));
        assertThat(SenderWiring.foldMarkWrites(config, budget, marks)).isTrue();
        processor = new DeliveryProcessor(config, budget, transport, sink, marks,
                Fakes.metrics(new SimpleMeterRegistry()), Clock.systemUTC(), new SplittableRandom(7), new BotSlots(8),
                new ChatRegistry(1000));
        processor.resultLookup(new ResultLookup() {
            @Override
            public boolean hasResult(String resultKey, String messageId, long sinceMs) {
                lookups.add(messageId + "@" + resultKey);
                return resultsOnTopic.contains(messageId);
            }

            @Override
            public void close() {
            }
        });
        client = RedisClient.create(redis.url());
        direct = client.connect();
    }

    @AfterEach
    void stop() {
        direct.close();
        client.shutdown();
        marks.close();
        budget.close();
        redis.close();
    }

    @Test
    void the_grant_writes_the_in_flight_mark_and_the_sent_mark_rides_on_the_next_call_of_the_bot() {
        budget.tryAcquire(dev.sluice.sender.budget.BudgetRequest.live("warmup", "1")); // NOSCRIPT's EVAL out of the way
        long calls = budget.redisRoundTrips();
        assertThat(runToEnd(pending("m1", "42"))).isEqualTo(Step.DONE);
        assertThat(transport.sent).containsExactly("42/text m1");
        assertThat(mark("m1")).as("granted and answered; its SENT waits for the next call").startsWith("FLIGHT|||")
                .endsWith("|42");
        assertThat(direct.sync().pttl(BudgetKeys.sentMark("bot", "m1"))).isBetween(TTL_MS - 60_000, TTL_MS);

        // a SENT waits MarkWrites.SENT_HOLD for its DONE (none comes: the sink here writes no mark), then rides
        awaitHold();
        assertThat(runToEnd(pending("m2", "43"))).isEqualTo(Step.DONE);
        assertThat(mark("m1")).as("carried by m2's decision").startsWith("SENT|DELIVERED|1|").endsWith("|42");
        assertThat(mark("m2")).startsWith("FLIGHT|||");
        assertThat(budget.redisRoundTrips() - calls).as("one script call per message, marks included").isEqualTo(2);
        assertThat(marks.redisWrites() + marks.redisReads()).as("no mark command of their own").isZero();
        assertThat(sink.results).extracting(DeliveryResult::getStatus)
                .containsExactly(DeliveryStatus.DELIVERED, DeliveryStatus.DELIVERED);

        assertThat(marks.flush()).isEqualTo(1); // m2's SENT
        assertThat(mark("m2")).startsWith("SENT|DELIVERED|2|");
    }

    @Test
    void a_message_read_again_whose_provider_call_was_accepted_is_never_sent_again() {
        // a killed owner's mark after the provider accepted: SENT (written by a later call before the kill)
        direct.sync().set(BudgetKeys.sentMark("bot", "s1"), "SENT|DELIVERED|77|" + System.currentTimeMillis() + "|42",
                SetArgs.Builder.px(TTL_MS));
        assertThat(runToEnd(pending("s1", "42"))).isEqualTo(Step.DONE);
        assertThat(transport.sent).isEmpty();
        assertThat(sink.results).singleElement().satisfies(r -> {
            assertThat(r.getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
            assertThat(r.getProviderMessageId()).isEqualTo(77L);
        });
    }

    @Test
    void a_message_left_in_flight_is_sent_once_unless_its_result_is_on_the_results_topic() {
        long at = System.currentTimeMillis();
        direct.sync().set(BudgetKeys.sentMark("bot", "f1"), dev.sluice.sender.idempotency.MarkValues.inFlight(at, "42"), SetArgs.Builder.px(TTL_MS));
        direct.sync().set(BudgetKeys.sentMark("bot", "f2"), dev.sluice.sender.idempotency.MarkValues.inFlight(at, "43"), SetArgs.Builder.px(TTL_MS));
        resultsOnTopic.add("f2"); // its killed owner's result reached the topic: the call was made and answered

        assertThat(runToEnd(pending("f1", "42"))).isEqualTo(Step.DONE);
        awaitHold(); // f1's SENT waits its hold, then rides on f2's call
        assertThat(runToEnd(pending("f2", "43"))).isEqualTo(Step.DONE);
        assertThat(lookups).containsExactly("f1@42", "f2@43");
        assertThat(transport.sent).as("f1 had no result: sent once; f2 not again").containsExactly("42/text f1");
        assertThat(sink.results).singleElement().satisfies(r -> assertThat(r.getMessageId()).isEqualTo("f1"));
        assertThat(sink.alreadyFinished).containsExactly("f2");
        assertThat(mark("f1")).as("its own grant marked it in flight again; f2's call carried its SENT")
                .startsWith("SENT|DELIVERED|");
    }

    private PendingMessage pending(String id, String chat) {
        return new PendingMessage(tp, 0, Fakes.message(id, chat, java.time.Instant.now().minusMillis(50), null));
    }

    /** Steps the message until its lane's head is done (bounded: a few rounds, waits honoured). */
    private Step runToEnd(PendingMessage p) {
        Step step = null;
        for (int i = 0; i < 20; i++) {
            step = processor.process(p);
            if (!(step instanceof Step.RetryAt r)) {
                return step;
            }
            long wait = r.readyAtMs() - System.currentTimeMillis();
            if (wait > 0) {
                try {
                    Thread.sleep(Math.min(wait, 2000)); // the step's own ready time, not a guess
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return step;
                }
            }
        }
        return step;
    }

    /** Until a SENT offered before this call has waited its hold (MarkWrites.SENT_HOLD): a known time, bounded. */
    private static void awaitHold() {
        long until = System.nanoTime() + dev.sluice.sender.budget.MarkWrites.SENT_HOLD.toNanos();
        while (System.nanoTime() - until < 0) {
            try {
                Thread.sleep(Math.max(1, (until - System.nanoTime()) / 1_000_000 + 1));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private String mark(String id) {
        return direct.sync().get(BudgetKeys.sentMark("bot", id));
    }
}
