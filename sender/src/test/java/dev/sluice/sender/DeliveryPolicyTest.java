package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.NotificationClass;
import dev.sluice.sender.http.FullJitterBackoff;
import java.time.Duration;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class DeliveryPolicyTest {
    private final DeliveryPolicy policy = DeliveryPolicy.of(Fakes.config("sender.max.reschedules", "4",
            "sender.resend.uncertain.classes", "CRITICAL", "budget.reservation.max.ms", "40"), true);

    @Test
    void reads_the_numbers_of_the_config() {
        assertThat(policy.maxAttempts()).isEqualTo(3);
        assertThat(policy.maxReschedules()).isEqualTo(4);
        assertThat(policy.backoff()).isEqualTo(new FullJitterBackoff(Duration.ofMillis(100), Duration.ofMillis(1000)));
        assertThat(policy.retryBackoff()).isEqualTo(Duration.ofMillis(100));
        assertThat(policy.retryAfterJitter()).isEqualTo(Duration.ofMillis(200));
        assertThat(policy.reservationMax()).isEqualTo(Duration.ofMillis(40));
        assertThat(policy.lateSlotMaxMs()).as("not configured").isEqualTo(-1);
    }

    @Test
    void gives_up_at_max_attempts_and_expires_past_max_reschedules() {
        assertThat(policy.givesUp(2)).isFalse();
        assertThat(policy.givesUp(3)).isTrue();
        assertThat(policy.tooManyReschedules(4)).as("4 waits are allowed").isFalse();
        assertThat(policy.tooManyReschedules(5)).isTrue();
    }

    @Test
    void only_the_listed_classes_are_resent_after_a_read_timeout() {
        assertThat(policy.keepsUncertain(NotificationClass.CRITICAL)).isFalse();
        assertThat(policy.keepsUncertain(NotificationClass.ROUTINE)).isTrue();
    }

    @Test
    void backoff_is_full_jitter_under_the_doubling_ceiling_and_the_cap() {
        SplittableRandom random = new SplittableRandom(7);
        long firstMax = 0;
        for (int i = 0; i < 2_000; i++) {
            long first = policy.backoffMs(1, random);
            assertThat(first).isBetween(1L, 100L);
            firstMax = Math.max(firstMax, first);
            assertThat(policy.backoffMs(3, random)).isBetween(1L, 400L);
            assertThat(policy.backoffMs(40, random)).isBetween(1L, 1000L);
        }
        assertThat(firstMax).as("spread over the whole range").isGreaterThan(90);
    }

    @Test
    void jitter_is_one_sided_and_zero_when_off() {
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 1_000; i++) {
            assertThat(policy.jitterMs(random)).isBetween(0L, 200L);
        }
        DeliveryPolicy noJitter = new DeliveryPolicy(3, 4, Set.of(), policy.backoff(), Duration.ZERO, Duration.ZERO,
                Duration.ZERO, -1);
        assertThat(noJitter.jitterMs(random)).isZero();
    }

    @Test
    void reservations_only_where_the_budget_reserves() {
        assertThat(policy.reserves()).isTrue();
        assertThat(policy.batchWindowMs(true)).isEqualTo(20);
        DeliveryPolicy local = DeliveryPolicy.of(Fakes.config("budget.reservation.max.ms", "40"), false);
        assertThat(local.reserves()).isFalse();
        assertThat(local.batchWindowMs(true)).isZero();
        assertThat(local.batchWindowMs(false)).isZero();
        assertThat(local.alignedMs(1_234, false)).as("no window: unchanged").isEqualTo(1_234);
    }

    @Test
    void routine_lanes_of_a_bot_serving_critical_work_get_their_own_horizon_never_longer_than_the_full_one() {
        DeliveryPolicy defaults = DeliveryPolicy.of(Fakes.config(), true);
        assertThat(defaults.reservationMax(true, true)).as("critical: budget.reservation.max.ms")
                .isEqualTo(Duration.ofMillis(500));
        assertThat(defaults.reservationMax(false, true)).as("routine of a bot sending critical messages: "
                + "budget.reservation.routine.max.ms").isEqualTo(Duration.ofMillis(100));
        assertThat(defaults.reservationMax(false, false)).as("routine of a bot sending none: the full horizon")
                .isEqualTo(Duration.ofMillis(500));
        assertThat(defaults.batchWindowMs(true)).as("half the horizon the routine lanes get").isEqualTo(50);
        assertThat(defaults.batchWindowMs(false)).isEqualTo(250);
        assertThat(policy.reservationMax(false, true)).as("routine 100 capped by the full 40")
                .isEqualTo(Duration.ofMillis(40));
        DeliveryPolicy noRoutine = DeliveryPolicy.of(Fakes.config("budget.reservation.routine.max.ms", "0"), true);
        assertThat(noRoutine.reserves()).as("critical lanes still reserve").isTrue();
        assertThat(noRoutine.reservationMax(false, true)).isZero();
        assertThat(noRoutine.batchWindowMs(true)).isZero();
        assertThat(noRoutine.batchWindowMs(false)).isEqualTo(250);
        DeliveryPolicy local = DeliveryPolicy.of(Fakes.config(), false);
        assertThat(local.reservationMax(true, true)).isZero();
        assertThat(local.reservationMax(false, false)).isZero();
    }

    @Test
    void waits_are_aligned_up_to_the_batch_window_never_earlier() {
        assertThat(policy.alignedMs(1_000, true)).isEqualTo(1_000);
        assertThat(policy.alignedMs(1_001, true)).isEqualTo(1_020);
        assertThat(policy.alignedMs(1_019, true)).isEqualTo(1_020);
        DeliveryPolicy defaults = DeliveryPolicy.of(Fakes.config(), true);
        assertThat(defaults.alignedMs(1_001, true)).isEqualTo(1_050);
        assertThat(defaults.alignedMs(1_001, false)).isEqualTo(1_250);
    }

    @Test
    void a_reserved_slot_may_be_late_by_the_configured_bound_else_one_interval_at_least_2_ms() {
        assertThat(policy.lateSlotMs(100)).isEqualTo(100);
        assertThat(policy.lateSlotMs(1)).isEqualTo(2);
        DeliveryPolicy strict = DeliveryPolicy.of(Fakes.config("budget.reservation.late.max.ms", "3"), true);
        assertThat(strict.lateSlotMs(100)).isEqualTo(3);
    }

    @Test
    void a_wait_never_ends_after_the_deadline() {
        assertThat(DeliveryPolicy.retryAt(5_000, null)).isEqualTo(new Step.RetryAt(5_000));
        assertThat(DeliveryPolicy.retryAt(5_000, 4_000L)).isEqualTo(new Step.RetryAt(4_000));
        assertThat(DeliveryPolicy.waitForBot("b1", null)).isEqualTo(new Step.WaitForBot(Set.of("b1"), Long.MAX_VALUE));
        assertThat(DeliveryPolicy.waitForBot("b1", 4_000L)).isEqualTo(new Step.WaitForBot(Set.of("b1"), 4_000));
    }
}
