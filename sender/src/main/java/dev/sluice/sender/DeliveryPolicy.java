package dev.sluice.sender;

import dev.sluice.avro.NotificationClass;
import dev.sluice.sender.http.FullJitterBackoff;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.random.RandomGenerator;

/**
 * The numbers of delivery and the small decisions made from them: how often a message is retried after 5xx or
 * connect errors ({@code sender.max.attempts}, full-jitter backoff from {@code sender.retry.backoff.ms} to
 * {@code sender.retry.backoff.max.ms}), how many provider-forced waits it may take ({@code sender.max.reschedules}),
 * which classes are resent after a read timeout ({@code sender.resend.uncertain.classes}), the one-sided jitter
 * after a 429's retry_after ({@code sender.retry.after.jitter.ms}), and the reservation horizons
 * ({@code budget.reservation.max.ms}, {@code budget.reservation.routine.max.ms},
 * {@code budget.reservation.late.max.ms}).
 *
 * <p>Immutable: built once by {@link DeliveryProcessor} and read by any thread. The random source is passed in by
 * the caller, which owns it.
 *
 * @param maxAttempts      transient failures after which a message is FAILED
 * @param maxReschedules   provider-forced waits after which a message is EXPIRED (more than this many)
 * @param resendUncertain  classes resent like a 5xx after a read timeout (the others become UNCERTAIN)
 * @param backoff          the 5xx/connect-error backoff
 * @param retryAfterJitter the largest one-sided jitter added to a 429's retry_after (zero: none)
 * @param reservationMax   how far ahead a live message may take the bot's next budget slot (zero: no reservations)
 * @param routineReservationMax the same for a routine lane (one not asking ahead; capped by
 *                         {@link dev.sluice.sender.budget.BudgetConfig#reservationRoutineMax})
 * @param lateSlotMaxMs    how late a reserved slot may still be used, -1 for one interval of the bot's rate
 */
record DeliveryPolicy(int maxAttempts, int maxReschedules, Set<NotificationClass> resendUncertain,
                      FullJitterBackoff backoff, Duration retryAfterJitter, Duration reservationMax,
                      Duration routineReservationMax, long lateSlotMaxMs) {

    DeliveryPolicy {
        resendUncertain = Set.copyOf(resendUncertain);
        Objects.requireNonNull(backoff);
        Objects.requireNonNull(retryAfterJitter);
        Objects.requireNonNull(reservationMax);
        Objects.requireNonNull(routineReservationMax);
    }

    /**
     * The policy of {@code config}. Reservations (and the aligned waits that serve them) only where the budget can
     * reserve (Redis): elsewhere they would only delay.
     */
    static DeliveryPolicy of(SenderConfig config, boolean budgetReserves) {
        return new DeliveryPolicy(config.maxAttempts(), config.maxReschedules(), config.resendUncertainClasses(),
                new FullJitterBackoff(config.retryBackoff(), config.retryBackoffMax()), config.retryAfterJitter(),
                budgetReserves ? config.budgetConfig().reservationMax() : Duration.ZERO,
                budgetReserves ? config.budgetConfig().reservationRoutineMax() : Duration.ZERO,
                config.budgetConfig().reservationLateMax().map(Duration::toMillis).orElse(-1L));
    }

    /** The wait after a step that failed in the sender itself (not the provider): the backoff's base. */
    Duration retryBackoff() {
        return backoff.base();
    }

    /** Whether a message has taken more provider-forced waits than allowed (it becomes EXPIRED). */
    boolean tooManyReschedules(int reschedules) {
        return reschedules > maxReschedules;
    }

    /** Whether a message with this many transient failures is given up (FAILED). */
    boolean givesUp(int transientFailures) {
        return transientFailures >= maxAttempts;
    }

    /** Whether a call that may have reached the provider is left as UNCERTAIN (not resent) for this class. */
    boolean keepsUncertain(NotificationClass eventClass) {
        return !resendUncertain.contains(eventClass);
    }

    /** The wait after the {@code failures}-th transient failure: uniform in [1, min(cap, base·2^(n−1))] ms. */
    long backoffMs(int failures, RandomGenerator random) {
        return backoff.delay(failures, random).toMillis();
    }

    /** One-sided jitter in [0, sender.retry.after.jitter.ms]: never earlier than the wait itself. */
    long jitterMs(RandomGenerator random) {
        return retryAfterJitter.isZero() ? 0 : random.nextLong(retryAfterJitter.toMillis() + 1);
    }

    /** Whether live messages reserve the bot's next budget slot. */
    boolean reserves() {
        return !reservationMax.isZero();
    }

    /**
     * The horizon a request gets from the budget: the full one for a lane that asks ahead of routine work (a CRITICAL
     * message or the head before one) and for a routine lane of a bot not serving critical work
     * ({@code routineShort} false: {@link dev.sluice.sender.budget.BudgetPort#routineHorizonShort}), the routine one
     * otherwise. Routine reservations are the slots a critical message arriving later must wait behind, so they stay
     * short while the bot sends critical messages ({@code budget.lua} applies it; this says what the lane got).
     */
    Duration reservationMax(boolean asksAhead, boolean routineShort) {
        return asksAhead || !routineShort ? reservationMax : routineReservationMax;
    }

    /**
     * Half the horizon a waiting routine lane gets ({@link #reservationMax(boolean, boolean)}; 0: none): the window
     * waiting routine lanes of a bot are aligned to (lanes that ask ahead are never aligned).
     */
    long batchWindowMs(boolean routineShort) {
        return reservationMax(false, routineShort).toMillis() / 2;
    }

    /** {@code atMs} moved up to the next multiple of the batch window (unchanged without one). */
    long alignedMs(long atMs, boolean routineShort) {
        long window = batchWindowMs(routineShort);
        return window <= 0 ? atMs : Math.floorDiv(atMs + window - 1, window) * window;
    }

    /**
     * How late a reserved slot may still be used: {@code budget.reservation.late.max.ms}, else one interval of the
     * bot's rate ({@code intervalMs}), at least 2 ms.
     */
    long lateSlotMs(long intervalMs) {
        return lateSlotMaxMs >= 0 ? lateSlotMaxMs : Math.max(2, intervalMs);
    }

    /**
     * When a live request refused by the bot's shared GCRA ({@code GLOBAL}, {@code waitMs} from {@code askedAtMs})
     * may ask again with a reservation horizon of {@code reservationMaxMs}: as soon as the horizon reaches the instant
     * the budget admits, not later than that instant (0 horizon: exactly then). The one rule for the pacer
     * ({@link Refusals}) and the bot's hint ({@link BusyBots}).
     */
    static long reservingAskAgainAtMs(long askedAtMs, long waitMs, long reservationMaxMs) {
        return askedAtMs + Math.max(0, waitMs - reservationMaxMs);
    }

    /** A wait until {@code atMs}; a wait past the deadline ends at the deadline, where the message becomes EXPIRED. */
    static Step.RetryAt retryAt(long atMs, Long expiresAt) {
        return new Step.RetryAt(expiresAt == null ? atMs : Math.min(atMs, expiresAt));
    }

    /** Parked until a call of {@code bot} ends (a free in-flight slot), at most until the deadline. */
    static Step.WaitForBot waitForBot(String bot, Long expiresAt) {
        return new Step.WaitForBot(Set.of(bot), expiresAt == null ? Long.MAX_VALUE : expiresAt);
    }
}
