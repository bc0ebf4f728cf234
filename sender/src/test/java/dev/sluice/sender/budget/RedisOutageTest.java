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

    /** A fixed clock: every fallback decision is within the "recent shared decision" window. */
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
        assertThat(outage.decidedInOutage("bot")).as("thread B: Redis failed it; first fallback decision: drained")
                .isTrue();
        assertThat(outage.state()).isEqualTo(BudgetState.FALLBACK_LOCAL);
        outage.decidedShared(); // ... and succeeds: shared again, without a resume
        outage.resumeIfNeeded(shared, calls); // the next shared call
        assertThat(drainedInRedis).as("the bot the fallback decided is drained in Redis").containsExactly("bot");

        assertThat(outage.decidedInOutage("bot")).as("the next outage starts the bot drained again").isTrue();
        assertThat(outage.decidedInOutage("bot")).as("once per outage").isFalse();
    }

    @Test
    void each_outage_starts_a_bot_drained_once() {
        RedisOutage outage = outage();
        LongAdder calls = new LongAdder();
        outage.decidedShared();
        assertThat(outage.decidedInOutage("a")).isTrue();
        assertThat(outage.decidedInOutage("a")).isFalse();
        assertThat(outage.decidedInOutage("b")).isTrue();
        outage.resumeIfNeeded(shared, calls);
        outage.decidedShared();
        assertThat(drainedInRedis).containsExactlyInAnyOrder("a", "b");
        assertThat(outage.decidedInOutage("a")).isTrue();
        assertThat(outage.decidedInOutage("a")).isFalse();
    }
}
