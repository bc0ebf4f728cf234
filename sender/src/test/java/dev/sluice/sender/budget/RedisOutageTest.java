package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.metrics.BudgetState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/** The outage and resume state machine alone (ResilientBudgetTest drives it through the whole budget). */
class RedisOutageTest {
    private final List<String> drainedInRedis = new ArrayList<>();
    private final BudgetPort shared = new BudgetPort() {
        @Override
        public Decision tryAcquire(BudgetRequest request) {
            return Decision.grant();
        }

        @Override
        public void penalize(String botId, PenaltyScope scope, String chatId, Duration retryAfter) {
        }

        @Override
        public void startDrained(String botId) {
            drainedInRedis.add(botId);
        }

        @Override
        public BudgetState state() {
            return BudgetState.SHARED;
        }

        @Override
        public void close() {
        }
    };

    private static final Runnable NO_DRAIN = () -> { };

    /**
     * Found by RedisStallIT in a full verify (9 x 429 at a disconnect, 0 in runs before): at the switch many sending
     * threads fail together and decide in the fallback at once; the first started the bot drained, but the others
     * (told "not first") decided before that drain was applied, so each sender granted its fresh fallback burst on top
     * of what the provider still counted from the shared budget. Now the others wait for the drain.
     */
    @Test
    void a_decision_racing_the_first_one_of_an_outage_waits_for_its_drained_start() throws Exception {
        RedisOutage outage = outage();
        outage.decidedShared();
        java.util.concurrent.CountDownLatch draining = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        List<String> order = java.util.Collections.synchronizedList(new ArrayList<>());
        Thread first = new Thread(() -> outage.decidedInOutage("bot", () -> {
            draining.countDown();
            try {
                release.await(10, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            order.add("drained");
        }));
        first.start();
        assertThat(draining.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        boolean[] secondDrained = new boolean[1];
        Thread second = new Thread(() -> {
            secondDrained[0] = outage.decidedInOutage("bot", () -> order.add("drained twice"));
            order.add("second decides");
        });
        second.start();
        // the second waits for the first's drain (blocked on the bot's entry), whatever the scheduling
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                second.getState() == Thread.State.BLOCKED || second.getState() == Thread.State.WAITING
                        || !second.isAlive());
        release.countDown();
        first.join(10_000);
        second.join(10_000);
        assertThat(order).containsExactly("drained", "second decides");
        assertThat(secondDrained[0]).isFalse();
    }

    /** A fixed clock: every fallback decision is within the first second of its outage (drained). */
    private static RedisOutage outage() {
        Clock clock = Clock.fixed(Instant.parse("2026-12-03T12:00:00Z"), ZoneOffset.UTC);
        return new RedisOutage(BudgetConfig.builder(new BudgetLimits(30, 3, 1000, 1000)).build(), BudgetListener.NONE,
                clock);
    }

    /**
     * A review found the race: a shared call that passed {@code resumeIfNeeded}'s early return (shared, nothing kept)
     * while another thread entered the outage and decided a bot, then succeeded, put the state back to SHARED without
     * the resume; the next shared calls returned early too, so the bot stayed in the outage's "fallback started" set
     * (and was never drained in Redis), and at the next outage its fallback started undrained: the overlap that
     * RedisStallIT showed as 429s at the switch. Interleaving of the two threads, played in order on one.
     */
    @Test
    void a_shared_decision_racing_the_switch_to_the_fallback_does_not_make_the_next_outage_start_undrained() {
        RedisOutage outage = outage();
        LongAdder calls = new LongAdder();
        outage.resumeIfNeeded(shared, calls); // thread A: a shared call, nothing to resume
        outage.decidedShared();
        outage.resumeIfNeeded(shared, calls); // thread A: its next shared call passes the early return ...
        assertThat(outage.decidedInOutage("bot", NO_DRAIN)).as("thread B: Redis failed it; first fallback decision: drained")
                .isTrue();
        assertThat(outage.state()).isEqualTo(BudgetState.FALLBACK_LOCAL);
        outage.decidedShared(); // ... and succeeds: shared again, without a resume
        outage.resumeIfNeeded(shared, calls); // the next shared call
        assertThat(drainedInRedis).as("the bot the fallback decided is drained in Redis").containsExactly("bot");

        assertThat(outage.decidedInOutage("bot", NO_DRAIN)).as("the next outage starts the bot drained again").isTrue();
        assertThat(outage.decidedInOutage("bot", NO_DRAIN)).as("once per outage").isFalse();
    }

    @Test
    void each_outage_starts_a_bot_drained_once() {
        RedisOutage outage = outage();
        LongAdder calls = new LongAdder();
        outage.decidedShared();
        assertThat(outage.decidedInOutage("a", NO_DRAIN)).isTrue();
        assertThat(outage.decidedInOutage("a", NO_DRAIN)).isFalse();
        assertThat(outage.decidedInOutage("b", NO_DRAIN)).isTrue();
        outage.resumeIfNeeded(shared, calls);
        outage.decidedShared();
        assertThat(drainedInRedis).containsExactlyInAnyOrder("a", "b");
        assertThat(outage.decidedInOutage("a", NO_DRAIN)).isTrue();
        assertThat(outage.decidedInOutage("a", NO_DRAIN)).isFalse();
    }
    /**
     * Found by RedisStallIT in a full verify and in CI (10 x 429 at a disconnect): a rebalance gave two of three senders
     * their first partitions just as Redis went, so neither had made a shared decision of its own, and the rule "drained
     * within 1 s of this instance's last shared decision" started their fallbacks undrained, next to the third sender's
     * full shared rate of the last second. The provider counts every replica's grants: the outage's start decides.
     */
    @Test
    void a_replica_that_decided_nothing_shared_still_starts_its_bots_drained_when_the_outage_begins() {
        dev.sluice.testkit.ManualClock clock = new dev.sluice.testkit.ManualClock();
        RedisOutage outage = new RedisOutage(BudgetConfig.builder(new BudgetLimits(30, 3, 1000, 1000)).build(),
                BudgetListener.NONE, clock);
        // no decidedShared(): this sender had nothing to send until the rebalance (or started while Redis was down)
        assertThat(outage.decidedInOutage("bot", NO_DRAIN)).as("first decision of the outage, at its start: drained")
                .isTrue();
        clock.advance(Duration.ofMillis(1000));
        assertThat(outage.decidedInOutage("second", NO_DRAIN)).as("1 s into the outage: still drained").isTrue();
        clock.advance(Duration.ofMillis(1));
        assertThat(outage.decidedInOutage("later", NO_DRAIN))
                .as("over 1 s into the outage every replica's shared grant is older: not drained").isFalse();
    }
}
