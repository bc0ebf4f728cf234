package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.sluice.config.ConfigException;
import dev.sluice.config.Settings;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BudgetConfigTest {

    @Test
    void defaults_follow_the_telegram_faq() {
        BudgetConfig c = BudgetConfig.from(Settings.of(Map.of()));
        BudgetLimits l = c.limitsFor("any");
        assertThat(c.defaults().globalRatePerS()).as("configured").isEqualTo(30);
        assertThat(c.globalArrivalMargin()).isEqualTo(java.time.Duration.ofMillis(50));
        assertThat(l.globalRatePerS()).as("granted: 30 x 1000 / 1050").isCloseTo(28.5714, within(0.0001));
        assertThat(l.chatRatePerS()).isEqualTo(1);
        assertThat(l.groupRatePerMin()).isEqualTo(20);
        assertThat(l.groupIntervalMicros()).isEqualTo(3_000_000);
        assertThat(c.groupArrivalMargin()).isEqualTo(java.time.Duration.ofMillis(3000));
        assertThat(l.groupIntervalMicros(c.groupArrivalMargin().toMillis())).isEqualTo(3_150_000);
        assertThat(c.backfillHeadroom()).isEqualTo(0.2);
        assertThat(c.outageMode()).isEqualTo(BudgetConfig.OutageMode.LOCAL_FALLBACK);
    }

    @Test
    void per_bot_rate_and_paid_broadcast() {
        BudgetConfig c = BudgetConfig.from(Settings.of(Map.of(
                "bot.slow.rate.per.s", "5", "bot.news.paid.broadcast", "true", "bot.other.paid.broadcast", "false",
                "budget.max.replicas", "4", "budget.redis.outage.mode", "fail-closed", "budget.global.arrival.margin.ms", "0")));
        assertThat(c.limitsFor("slow").globalRatePerS()).isEqualTo(5);
        assertThat(c.limitsFor("news").globalRatePerS()).isEqualTo(1000);
        assertThat(c.limitsFor("other").globalRatePerS()).isEqualTo(30);
        assertThat(c.outageMode()).isEqualTo(BudgetConfig.OutageMode.FAIL_CLOSED);
        BudgetConfig share = c.fallbackShare();
        assertThat(share.limitsFor("news").globalRatePerS()).isEqualTo(250);
        assertThat(share.limitsFor("slow").globalRatePerS()).isEqualTo(1.25);
        assertThat(share.limitsFor("other").globalRatePerS()).isEqualTo(7.5);
    }

    @Test
    void failover_policy_and_eviction_check_are_read_with_their_defaults() {
        BudgetConfig defaults = BudgetConfig.from(Settings.of(Map.of()));
        assertThat(defaults.failoverPolicy()).isEqualTo(BudgetConfig.FailoverPolicy.DRAINED_RESTART);
        assertThat(defaults.evictionCheck()).isEqualTo(BudgetConfig.EvictionCheck.WARN);
        BudgetConfig set = BudgetConfig.from(Settings.of(Map.of("budget.redis.failover.policy", "none",
                "budget.redis.eviction.check", "refuse")));
        assertThat(set.failoverPolicy()).isEqualTo(BudgetConfig.FailoverPolicy.NONE);
        assertThat(set.evictionCheck()).isEqualTo(BudgetConfig.EvictionCheck.REFUSE);
        assertThat(set.toBuilder().build().failoverPolicy()).isEqualTo(BudgetConfig.FailoverPolicy.NONE);
        assertThatThrownBy(() -> BudgetConfig.from(Settings.of(Map.of("budget.redis.failover.policy", "wait"))))
                .hasMessageContaining("budget.redis.failover.policy").hasMessageContaining("wait")
                .hasMessageContaining("drained-restart");
    }

    @Test
    void bad_values_name_the_key_and_the_value() {
        assertThatThrownBy(() -> BudgetConfig.from(Settings.of(Map.of("budget.backfill.headroom", "1.5"))))
                .isInstanceOf(ConfigException.class).hasMessageContaining("budget.backfill.headroom")
                .hasMessageContaining("1.5");
        assertThatThrownBy(() -> BudgetConfig.from(Settings.of(Map.of("budget.backfill.headroom", "1"))))
                .hasMessageContaining("budget.backfill.headroom");
        assertThatThrownBy(() -> BudgetConfig.from(Settings.of(Map.of("budget.redis.outage.mode", "maybe"))))
                .hasMessageContaining("budget.redis.outage.mode").hasMessageContaining("fail-closed");
        assertThatThrownBy(() -> BudgetConfig.from(Settings.of(Map.of("bot.x.rate.per.s", "-3"))))
                .hasMessageContaining("bot.x.rate.per.s");
        assertThatThrownBy(() -> BudgetConfig.from(Settings.of(Map.of("budget.aimd.floor", "0"))))
                .hasMessageContaining("budget.aimd.floor");
        assertThatThrownBy(() -> BudgetConfig.from(Settings.of(Map.of("budget.reservation.late.max.ms", "-1"))))
                .hasMessageContaining("budget.reservation.late.max.ms").hasMessageContaining("-1");
    }

    @Test
    void the_late_max_of_a_reserved_slot_is_optional_and_survives_the_builder() {
        assertThat(BudgetConfig.from(Settings.of(Map.of())).reservationLateMax()).isEmpty();
        BudgetConfig c = BudgetConfig.from(Settings.of(Map.of("budget.reservation.late.max.ms", "3")));
        assertThat(c.reservationLateMax()).contains(java.time.Duration.ofMillis(3));
        assertThat(c.toBuilder().build().reservationLateMax()).contains(java.time.Duration.ofMillis(3));
        assertThat(c.fallbackShare().reservationLateMax()).contains(java.time.Duration.ofMillis(3));
    }

    @Test
    void the_arrival_guard_is_on_at_telegrams_30_by_default_and_its_slack_follows_the_rate_burst_and_limit() {
        assertThat(BudgetConfig.from(Settings.of(Map.of())).arrivalGuardLimitPerS()).isEqualTo(30);
        assertThat(BudgetConfig.from(Settings.of(Map.of())).reservationMax()).isEqualTo(java.time.Duration.ofMillis(500));
        assertThat(BudgetConfig.of(BudgetLimits.telegramDefaults()).arrivalGuardLimitPerS()).as("off in code").isZero();
        assertThat(BudgetConfig.of(BudgetLimits.telegramDefaults()).reservationMax()).as("off in code").isZero();
        assertThat(BudgetConfig.from(Settings.of(Map.of("budget.arrival.guard.limit.per.s", "0",
                "budget.reservation.max.ms", "0"))).arrivalGuardLimitPerS()).as("0 turns it off").isZero();
        BudgetConfig c = BudgetConfig.from(Settings.of(Map.of("budget.arrival.guard.limit.per.s", "30",
                "budget.global.rate.per.s", "29.8", "bot.fast.rate.per.s", "30", "budget.global.arrival.margin.ms", "0")));
        assertThat(c.arrivalGuardLimitPerS()).isEqualTo(30);
        // 31 grants at 29.8/s with burst 1 span 30 x 33.557 ms = 1006.71 ms: 6.71 ms more than Telegram's second
        assertThat(c.arrivalSlack("any").toNanos()).isBetween(6_711_000L, 6_712_000L);
        assertThat(c.arrivalSlack("fast")).as("at the limit itself: no slack").isZero();
        assertThat(c.toBuilder().build().arrivalGuardLimitPerS()).isEqualTo(30);
        assertThat(c.fallbackShare().arrivalGuardLimitPerS()).as("fallback grants are not numbered").isZero();
        assertThatThrownBy(() -> BudgetConfig.from(Settings.of(Map.of("budget.arrival.guard.limit.per.s", "-1"))))
                .hasMessageContaining("budget.arrival.guard.limit.per.s").hasMessageContaining("-1");
    }

    @Test
    void the_guard_counts_a_paid_or_provider_bot_against_its_own_higher_limit() {
        BudgetConfig c = BudgetConfig.from(Settings.of(Map.of("budget.arrival.guard.limit.per.s", "30",
                "bot.news.paid.broadcast", "true", "bot.slow.rate.per.s", "5", "budget.global.arrival.margin.ms", "50")));
        assertThat(c.arrivalGuardLimitFor("any")).isEqualTo(30);
        assertThat(c.arrivalGuardLimitFor("slow")).as("a Telegram bot: Telegram's 30").isEqualTo(30);
        assertThat(c.arrivalGuardLimitFor("news")).as("paid: Telegram counts it against 1000/s").isEqualTo(1000);
        // 1001 grants at 952.4/s (1000 less the margin) span 1050 ms: its slack is the margin, as for any other bot;
        // counted against 30 it was 0 (every answer later than its slot reported, a floor every 30 grants)
        assertThat(c.arrivalSlack("news").toMillis()).isBetween(49L, 50L);
        assertThat(c.arrivalSlack("any").toMillis()).isBetween(49L, 50L);
        BudgetConfig provider = c.toBuilder().botLimits("ext:fast", new BudgetLimits(100.5, 1, 1000, 100)).build();
        assertThat(provider.arrivalGuardLimitFor("ext:fast")).as("an HTTP provider at 100.5/s").isEqualTo(100);
        assertThat(BudgetConfig.from(Settings.of(Map.of("bot.news.paid.broadcast", "true", "budget.arrival.guard.limit.per.s",
                "0"))).arrivalGuardLimitFor("news")).as("guard off").isZero();
    }

    @Test
    void the_guard_counts_a_bot_configured_above_its_limit_against_its_configured_rate() {
        BudgetConfig c = BudgetConfig.from(Settings.of(Map.of("budget.arrival.guard.limit.per.s", "30",
                "bot.big.rate.per.s", "50.9", "budget.global.arrival.margin.ms", "50")));
        // counted against 30, a bot granted 48.5/s had a slack of 0 and met a floor at every 30th grant after any late
        // answer: a guard on by default would cut every bot configured above Telegram's 30 to 30 per second
        assertThat(c.arrivalGuardLimitFor("big")).as("bot.big.rate.per.s=50.9").isEqualTo(50);
        assertThat(c.arrivalSlack("big").toMillis()).as("the margin, less the rounding of 50.9 down").isBetween(28L, 32L);
        BudgetConfig fast = BudgetConfig.from(Settings.of(Map.of("budget.global.rate.per.s", "270")));
        assertThat(fast.arrivalGuardLimitFor("any")).as("every bot's rate above the key's 30").isEqualTo(270);
        assertThat(fast.arrivalSlack("any").toMillis()).isBetween(49L, 50L);
    }

    @Test
    void the_global_arrival_margin_stretches_every_bots_global_interval_when_read_from_settings_and_not_in_code() {
        BudgetConfig c = BudgetConfig.from(Settings.of(Map.of("budget.global.arrival.margin.ms", "100",
                "bot.slow.rate.per.s", "5.5", "bot.news.paid.broadcast", "true", "budget.arrival.guard.limit.per.s", "30")));
        assertThat(c.globalArrivalMargin()).isEqualTo(java.time.Duration.ofMillis(100));
        // rate x 1000 / 1100: any 31 grants at the default 30/s span 30 x 36.67 ms = 1100 ms, 1 s + the margin
        assertThat(c.limitsFor("any").globalRatePerS()).isCloseTo(27.2727, within(0.0001));
        assertThat(c.limitsFor("slow").globalRatePerS()).isCloseTo(5.0, within(1e-9));
        assertThat(c.limitsFor("news").globalRatePerS()).isCloseTo(909.0909, within(0.0001));
        assertThat(c.limitsFor("any").chatRatePerS()).as("per-chat and group limits untouched").isEqualTo(1);
        assertThat(c.arrivalSlack("any").toMillis()).as("the guard's slack is the margin").isEqualTo(100);
        assertThat(c.toBuilder().build().limitsFor("any").globalRatePerS()).isCloseTo(27.2727, within(0.0001));
        assertThat(c.fallbackShare().limitsFor("slow").globalRatePerS()).as("5.5 / replicas, then the margin")
                .isCloseTo(5.0 / c.maxReplicas(), within(1e-9));
        assertThat(BudgetConfig.from(Settings.of(Map.of("budget.global.arrival.margin.ms", "0"))).limitsFor("any")
                .globalRatePerS()).isEqualTo(30);
        assertThat(BudgetConfig.of(BudgetLimits.telegramDefaults()).limitsFor("any").globalRatePerS())
                .as("limits given in code are granted as given").isEqualTo(30);
        assertThatThrownBy(() -> BudgetConfig.from(Settings.of(Map.of("budget.global.arrival.margin.ms", "1001"))))
                .hasMessageContaining("budget.global.arrival.margin.ms").hasMessageContaining("1001");
    }

    @Test
    void the_group_arrival_margin_stretches_the_group_interval_and_survives_the_builder_and_fallback() {
        BudgetConfig c = BudgetConfig.from(Settings.of(Map.of("budget.group.arrival.margin.ms", "1200",
                "budget.group.rate.per.min", "19")));
        assertThat(c.groupArrivalMargin()).isEqualTo(java.time.Duration.ofMillis(1200));
        BudgetLimits l = c.limitsFor("any");
        // ceil(60e6 / 19) = 3,157,895 us, times 61,200 / 60,000 rounded up
        assertThat(l.groupIntervalMicros(1200)).isEqualTo(3_221_053);
        assertThat(l.groupIntervalMicros(0)).isEqualTo(l.groupIntervalMicros());
        assertThat(c.toBuilder().build().groupArrivalMargin()).isEqualTo(java.time.Duration.ofMillis(1200));
        assertThat(c.fallbackShare().groupArrivalMargin()).isEqualTo(java.time.Duration.ofMillis(1200));
        assertThat(BudgetConfig.from(Settings.of(Map.of("budget.group.arrival.margin.ms", "0"))).groupArrivalMargin())
                .isZero();
        assertThatThrownBy(() -> BudgetConfig.from(Settings.of(Map.of("budget.group.arrival.margin.ms", "-1"))))
                .isInstanceOf(ConfigException.class).hasMessageContaining("budget.group.arrival.margin.ms")
                .hasMessageContaining("-1");
        assertThatThrownBy(() -> BudgetConfig.from(Settings.of(Map.of("budget.group.arrival.margin.ms", "60001"))))
                .hasMessageContaining("budget.group.arrival.margin.ms");
    }

    @Test
    void routine_reservation_horizon_defaults_to_100_ms_is_capped_by_the_full_one_and_survives_a_rebuild() {
        BudgetConfig defaults = BudgetConfig.from(Settings.of(Map.of()));
        assertThat(defaults.reservationRoutineMax()).isEqualTo(java.time.Duration.ofMillis(100));
        BudgetConfig capped = BudgetConfig.from(Settings.of(Map.of("budget.reservation.max.ms", "60",
                "budget.reservation.routine.max.ms", "300")));
        assertThat(capped.reservationRoutineMax()).as("never beyond budget.reservation.max.ms")
                .isEqualTo(java.time.Duration.ofMillis(60));
        BudgetConfig set = BudgetConfig.from(Settings.of(Map.of("budget.reservation.routine.max.ms", "20")));
        assertThat(set.reservationRoutineMax()).isEqualTo(java.time.Duration.ofMillis(20));
        assertThat(set.toBuilder().build().reservationRoutineMax()).isEqualTo(java.time.Duration.ofMillis(20));
        assertThat(set.fallbackShare().reservationRoutineMax()).isEqualTo(java.time.Duration.ofMillis(20));
        BudgetConfig inCode = BudgetConfig.builder(BudgetLimits.telegramDefaults())
                .reservationMax(java.time.Duration.ofMillis(400)).build();
        assertThat(inCode.reservationRoutineMax()).as("built in code without it: the full horizon for every lane")
                .isEqualTo(java.time.Duration.ofMillis(400));
        assertThatThrownBy(() -> BudgetConfig.from(Settings.of(Map.of("budget.reservation.routine.max.ms", "-5"))))
                .hasMessageContaining("budget.reservation.routine.max.ms").hasMessageContaining("-5");
    }

    @Test
    void critical_memory_defaults_to_ten_minutes_survives_a_rebuild_and_a_bad_value_names_key_and_value() {
        assertThat(BudgetConfig.from(Settings.of(Map.of())).reservationCriticalMemory())
                .isEqualTo(java.time.Duration.ofMinutes(10));
        assertThat(BudgetConfig.of(BudgetLimits.telegramDefaults()).reservationCriticalMemory()).as("in code too")
                .isEqualTo(java.time.Duration.ofMinutes(10));
        BudgetConfig zero = BudgetConfig.from(Settings.of(Map.of("budget.reservation.critical.memory.ms", "0")));
        assertThat(zero.reservationCriticalMemory()).isZero();
        assertThat(zero.toBuilder().build().reservationCriticalMemory()).isZero();
        assertThat(zero.fallbackShare().reservationCriticalMemory()).isZero();
        assertThatThrownBy(() -> BudgetConfig.from(Settings.of(Map.of("budget.reservation.critical.memory.ms",
                "604800001")))).hasMessageContaining("budget.reservation.critical.memory.ms")
                .hasMessageContaining("604800001");
    }
}
