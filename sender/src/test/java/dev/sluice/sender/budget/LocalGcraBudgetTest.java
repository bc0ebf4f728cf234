package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.ManualClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The contract on the in-process budget, plus exact checks on a fake clock. */
class LocalGcraBudgetTest extends BudgetContract {

    @Override
    protected BudgetPort budget(BudgetConfig config) {
        return new LocalGcraBudget(config, java.time.Clock.systemUTC());
    }

    @Test
    void admits_exactly_burst_plus_rate_times_T_on_a_fake_clock() {
        ManualClock clock = new ManualClock();
        LocalGcraBudget b = new LocalGcraBudget(new BudgetLimits(10, 10, 1000, 1000), clock);
        int granted = 0;
        int chat = 0;
        // T = 10 s in 1 ms steps, trying 3 times per step
        for (int ms = 0; ms <= 10_000; ms++) {
            for (int k = 0; k < 3; k++) {
                if (b.tryAcquire("bot", "c" + chat++).granted()) {
                    granted++;
                }
            }
            clock.advance(Duration.ofMillis(1));
        }
        assertThat(granted).isEqualTo(10 + 10 * 10);
    }

    @Test
    void backfill_alone_gets_exactly_the_rate_above_the_headroom_and_live_its_share_on_a_fake_clock() {
        ManualClock clock = new ManualClock();
        // rate 50/s burst 1, headroom 0.5: backfill alone at most 25/s (interval 40 ms), live at the global 20 ms
        LocalGcraBudget b = new LocalGcraBudget(BudgetConfig.builder(new BudgetLimits(50, 1, 1000, 1000))
                .backfillHeadroom(0.5).build(), clock);
        int granted = 0;
        int chat = 0;
        // T = 1 s in 1 ms steps, trying twice per step
        for (int ms = 0; ms <= 1000; ms++) {
            for (int k = 0; k < 2; k++) {
                if (b.tryAcquire(BudgetRequest.backfill("bot", "c" + chat++)).granted()) {
                    granted++;
                }
            }
            if (ms < 1000) {
                clock.advance(Duration.ofMillis(1));
            }
        }
        assertThat(granted).as("1 + 25/s x 1 s").isEqualTo(26); // without the headroom: 51
        // the last backfill grant was now (t = 1000 ms): live's share is the global interval after it; backfill waits
        assertThat(b.tryAcquire(BudgetRequest.live("bot", "live")).retryIn()).isEqualTo(Duration.ofMillis(20));
        clock.advance(Duration.ofMillis(20));
        Decision backfill = b.tryAcquire(BudgetRequest.backfill("bot", "late"));
        assertThat(backfill.limit()).isEqualTo(Limit.HEADROOM);
        assertThat(b.tryAcquire(BudgetRequest.live("bot", "live")).granted()).isTrue();
    }

    @Test
    void an_unshared_fallback_doubles_the_bot_gate_for_each_429_in_a_row_with_jitter_and_a_new_episode_starts_over() {
        ManualClock clock = new ManualClock();
        BudgetConfig config = BudgetConfig.builder(new BudgetLimits(30, 1, 1000, 1000)).maxReplicas(3).build().fallbackShare();
        // a jitter of 0 (the lowest draw): the doubled gates exactly
        java.util.random.RandomGenerator lowest = new java.util.random.RandomGenerator() {
            @Override
            public long nextLong() {
                return 0;
            }

            @Override
            public long nextLong(long bound) {
                return 0;
            }
        };
        LocalGcraBudget b = new LocalGcraBudget(config, clock, dev.sluice.metrics.BudgetState.FALLBACK_LOCAL, lowest);
        Duration r = Duration.ofSeconds(1);
        b.penalize("bot", PenaltyScope.BOT, "1", r);
        assertThat(b.tryAcquire("bot", "a").retryIn()).as("first: retry_after").isEqualTo(r);
        long expected = 1000;
        for (int k = 1; k <= LocalGcraBudget.MAX_DOUBLINGS + 2; k++) {
            clock.advance(Duration.ofMillis(expected)); // the gate lifts
            assertThat(b.tryAcquire("bot", "p" + k).granted()).as("the probe after gate %d", k).isTrue();
            clock.advance(Duration.ofMillis(100));
            b.penalize("bot", PenaltyScope.BOT, "p" + k, r); // the probe's answer: 429 again
            expected = 1000L << Math.min(k, LocalGcraBudget.MAX_DOUBLINGS);
            assertThat(b.tryAcquire("bot", "x" + k).retryIn()).as("gate %d", k).isEqualTo(Duration.ofMillis(expected));
        }
        // a 429 of a call in flight while the gate is up: no doubling
        clock.advance(Duration.ofMillis(10));
        b.penalize("bot", PenaltyScope.BOT, "late", r);
        assertThat(b.tryAcquire("bot", "y").retryIn()).isEqualTo(Duration.ofMillis(expected - 10));
        // long after: a new episode starts at retry_after again
        clock.advance(Duration.ofMinutes(5));
        b.penalize("bot", PenaltyScope.BOT, "new", r);
        assertThat(b.tryAcquire("bot", "z").retryIn()).isEqualTo(r);

        // told of penalties while Redis decides (not deciding), the fallback keeps the gate and never doubles it
        LocalGcraBudget told = new LocalGcraBudget(config, clock, dev.sluice.metrics.BudgetState.FALLBACK_LOCAL, lowest);
        told.penalize("bot", PenaltyScope.BOT, "1", r, false);
        clock.advance(r);
        told.penalize("bot", PenaltyScope.BOT, "p", r, false);
        assertThat(told.tryAcquire("bot", "x").retryIn()).isEqualTo(r);
        // a long retry_after is not doubled past itself: max(retry_after, 60 s)
        LocalGcraBudget longPenalty = new LocalGcraBudget(config, clock, dev.sluice.metrics.BudgetState.FALLBACK_LOCAL, lowest);
        Duration hour = Duration.ofHours(1);
        longPenalty.penalize("bot", PenaltyScope.BOT, "1", hour);
        clock.advance(hour);
        assertThat(longPenalty.tryAcquire("bot", "p").granted()).isTrue();
        longPenalty.penalize("bot", PenaltyScope.BOT, "p", hour);
        assertThat(longPenalty.tryAcquire("bot", "x").retryIn()).isEqualTo(hour);

        // the jitter adds up to one retry_after to a doubled gate; LOCAL mode (one process, nothing unshared) never backs off
        LocalGcraBudget jittered = new LocalGcraBudget(config, clock, dev.sluice.metrics.BudgetState.FALLBACK_LOCAL,
                new java.util.SplittableRandom(7));
        jittered.penalize("bot", PenaltyScope.BOT, "1", r);
        clock.advance(r);
        assertThat(jittered.tryAcquire("bot", "p").granted()).isTrue();
        jittered.penalize("bot", PenaltyScope.BOT, "p", r);
        assertThat(jittered.tryAcquire("bot", "a").retryIn()).isBetween(r.multipliedBy(2), r.multipliedBy(3));
        LocalGcraBudget local = new LocalGcraBudget(config, clock);
        local.penalize("bot", PenaltyScope.BOT, "1", r);
        clock.advance(r);
        assertThat(local.tryAcquire("bot", "p").granted()).isTrue();
        clock.advance(Duration.ofMillis(100));
        local.penalize("bot", PenaltyScope.BOT, "p", r);
        assertThat(local.tryAcquire("bot", "x").retryIn()).isEqualTo(r);
    }

    @Test
    void the_wait_is_rounded_up_and_waiting_it_exactly_passes_on_a_fake_clock() {
        ManualClock clock = new ManualClock();
        LocalGcraBudget b = new LocalGcraBudget(new BudgetLimits(3, 1, 1000, 1000), clock);
        assertThat(b.tryAcquire("bot", "a").granted()).isTrue();
        clock.advance(Duration.ofNanos(1_000)); // 1 us later
        Decision d = b.tryAcquire("bot", "b");
        // interval 1000/3 ms; 1 us later is the same ms, so 333.33 ms are left: rounded UP to 334
        assertThat(d.retryIn()).isEqualTo(Duration.ofMillis(334));
        clock.advance(Duration.ofMillis(333));
        assertThat(b.tryAcquire("bot", "b").granted()).isFalse();
        clock.advance(Duration.ofMillis(1));
        assertThat(b.tryAcquire("bot", "b").granted()).isTrue();
    }

    @Test
    void aimd_halves_the_rate_after_a_bot_penalty_and_climbs_back_linearly_on_a_fake_clock() {
        ManualClock clock = new ManualClock();
        // 10/s; factor 0.5; +0.1 of the rate per second; floor 0.2
        BudgetConfig config = BudgetConfig.builder(new BudgetLimits(10, 1, 1000, 1000)).aimd(0.5, 0.1, 0.2).build();
        LocalGcraBudget b = new LocalGcraBudget(config, clock);
        b.penalize("bot", PenaltyScope.BOT, "1", Duration.ofSeconds(2));
        assertThat(b.rateMultiplier("bot")).isEqualTo(0.5);
        b.penalize("bot", PenaltyScope.BOT, "1", Duration.ofSeconds(3)); // same episode: gate longer, no second cut
        assertThat(b.rateMultiplier("bot")).isEqualTo(0.5);
        assertThat(b.tryAcquire("bot", "a").limit()).isEqualTo(Limit.GATE_BOT);
        clock.advance(Duration.ofSeconds(3));
        assertThat(b.rateMultiplier("bot")).as("climbing starts when the gate lifts").isEqualTo(0.5);
        assertThat(b.tryAcquire("bot", "a").granted()).isTrue();
        assertThat(b.tryAcquire("bot", "b").retryIn()).as("5/s: 200 ms").isEqualTo(Duration.ofMillis(200));
        clock.advance(Duration.ofSeconds(2));
        assertThat(b.rateMultiplier("bot")).isEqualTo(0.7, org.assertj.core.data.Offset.offset(1e-9));
        clock.advance(Duration.ofSeconds(10));
        assertThat(b.rateMultiplier("bot")).as("capped at the configured rate").isEqualTo(1.0);
        // a new episode cuts again, down to the floor at most
        b.penalize("bot", PenaltyScope.BOT, "1", Duration.ofMillis(1));
        clock.advance(Duration.ofMillis(1));
        b.penalize("bot", PenaltyScope.BOT, "1", Duration.ofMillis(1));
        clock.advance(Duration.ofMillis(1));
        b.penalize("bot", PenaltyScope.BOT, "1", Duration.ofMillis(1));
        assertThat(b.rateMultiplier("bot")).isEqualTo(0.2, org.assertj.core.data.Offset.offset(0.001));
    }

    @Test
    void a_paid_broadcast_bot_gets_1000_per_second_and_others_their_own_rate() {
        ManualClock clock = new ManualClock();
        BudgetConfig config = BudgetConfig.builder(new BudgetLimits(30, 1, 1000, 1000))
                .paidBroadcast("paid").botRate("slow", 2).build();
        LocalGcraBudget b = new LocalGcraBudget(config, clock);
        assertThat(b.tryAcquire("paid", "a").granted()).isTrue();
        assertThat(b.tryAcquire("paid", "b").retryIn()).isEqualTo(Duration.ofMillis(1));
        assertThat(b.tryAcquire("slow", "a").granted()).isTrue();
        assertThat(b.tryAcquire("slow", "b").retryIn()).isEqualTo(Duration.ofMillis(500));
        assertThat(b.tryAcquire("other", "a").granted()).isTrue();
        assertThat(b.tryAcquire("other", "b").retryIn()).isEqualTo(Duration.ofMillis(34));
    }

    /** A drained start waits the whole hold whatever the burst: the first grant only at now + 1 s. */
    @org.junit.jupiter.api.Test
    void a_drained_start_waits_the_hold_also_with_a_burst() {
        ManualClock clock = new ManualClock();
        LocalGcraBudget b = new LocalGcraBudget(new BudgetLimits(10, 10, 1000, 1000), clock);
        b.startDrained("bot");
        Decision first = b.tryAcquire(BudgetRequest.live("bot", "1"));
        org.assertj.core.api.Assertions.assertThat(first.granted()).isFalse();
        org.assertj.core.api.Assertions.assertThat(first.retryIn().toMillis()).isBetween(999L, 1000L);
        clock.advance(java.time.Duration.ofMillis(1000));
        org.assertj.core.api.Assertions.assertThat(b.tryAcquire(BudgetRequest.live("bot", "1")).granted()).isTrue();
    }
}
