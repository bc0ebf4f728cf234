package dev.sluice.sender.budget;

import dev.sluice.metrics.BudgetState;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import java.time.Clock;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The outage and resume state machine of one {@link ResilientBudget}: the circuit breaker in front of Redis, the
 * budget state ({@link BudgetState#SHARED} or the outage mode's), and what an outage leaves for Redis when shared
 * mode resumes.
 *
 * <p>The circuit opens after {@code budget.circuit.minimum.calls} failed calls in a row; while open, nothing
 * is sent to Redis. After the probe interval the next request is a half-open probe: on success the shared
 * state ({@link BudgetState#SHARED}) resumes by itself; on failure the circuit opens again. Penalties recorded while
 * Redis is down ({@link #keepUnshared}) are written to Redis when shared mode resumes (with what is left of their
 * retry_after), so the other replicas learn them.
 *
 * <p><b>Resuming</b> ({@link #resumeIfNeeded}): before the first shared decision after an outage, every bot this
 * instance decided or penalized during the outage starts drained in Redis ({@link BudgetPort#startDrained}): a Redis
 * that came back empty does not hand out a fresh burst per bot on top of what the fallback budgets just sent.
 *
 * <p>Logs under {@link ResilientBudget}'s logger name, as before it was split out. Thread-safe, called from any
 * deciding thread: the breaker is Resilience4j's (thread-safe), the state is guarded by {@code nanosInState}, the
 * outage's bots and penalties are concurrent collections.
 */
final class RedisOutage {
    private static final Logger log = LoggerFactory.getLogger(ResilientBudget.class);

    private final BudgetListener listener;
    private final Clock clock;
    private final CircuitBreaker breaker;
    private final BudgetState outageState;
    private final Map<BudgetState, Long> nanosInState = new EnumMap<>(BudgetState.class);
    /** Bots decided or penalized while Redis could not decide: drained in Redis when shared mode resumes. */
    private final java.util.Set<String> touchedInOutage = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /**
     * Per bot, the outage (its number, {@link #outageEpoch}) whose fallback started it drained: a bot starts drained once
     * per outage. An epoch, not a set cleared at resume: a shared decision racing the switch can end an outage without a
     * resume, and a set would then keep the bot for the next outage, which would start it undrained.
     */
    private final Map<String, Long> fallbackStartedInOutage = new java.util.concurrent.ConcurrentHashMap<>();
    /** Incremented on each switch from shared to the outage mode (under {@code nanosInState}). */
    private volatile long outageEpoch;
    /** Penalties recorded while Redis was down, replayed when shared mode resumes. */
    private final java.util.Queue<Penalty> unshared = new java.util.concurrent.ConcurrentLinkedQueue<>();
    /**
     * When this instance's current outage began (its switch from shared, or its first decision when Redis was down at
     * start); written under {@code nanosInState}. A bot's first fallback decision within {@link #sharedRecentMs} of it is
     * drained: the provider may still count shared grants of any replica, this one's or not (RedisStallIT: two senders
     * given partitions by a rebalance just as Redis went had made no shared decision of their own; their fallbacks
     * started undrained next to the third sender's full shared rate, 10 x 429).
     */
    private volatile long outageStartMs;
    private final long sharedRecentMs;
    /** Written under {@code nanosInState} (transitions); volatile: read on every pacer and admission call. */
    private volatile BudgetState state = BudgetState.SHARED;
    private long stateSinceNanos = System.nanoTime();

    private record Penalty(String botId, PenaltyScope scope, String chatId, long untilMs) {
    }

    /**
     * Starts in {@link BudgetState#SHARED} (reported to {@code listener}), the circuit closed.
     *
     * @param clock time of the penalties kept during an outage (what is left of them when shared mode resumes)
     */
    RedisOutage(BudgetConfig config, BudgetListener listener, Clock clock) {
        this.listener = listener;
        this.clock = clock;
        this.sharedRecentMs = Math.max(1000, config.reservationMax().toMillis());
        this.outageState = config.outageMode() == BudgetConfig.OutageMode.FAIL_CLOSED
                ? BudgetState.PAUSED : BudgetState.FALLBACK_LOCAL;
        int calls = config.circuitMinimumCalls();
        this.breaker = CircuitBreaker.of("sluice-budget-redis", CircuitBreakerConfig.custom()
                .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .slidingWindowSize(calls)
                .minimumNumberOfCalls(calls)
                .failureRateThreshold(100)
                .waitDurationInOpenState(config.probeInterval())
                .permittedNumberOfCallsInHalfOpenState(1)
                .automaticTransitionFromOpenToHalfOpenEnabled(false)
                .recordExceptions(BudgetUnavailableException.class)
                .build());
        breaker.getEventPublisher().onStateTransition(e -> CircuitLog.transition(log, e.getStateTransition()));
        for (BudgetState s : BudgetState.values()) {
            nanosInState.put(s, 0L);
        }
        listener.stateChanged(state);
    }

    /**
     * Whether Redis may be called now (the breaker's permission: closed, or this is the half-open probe). A permitted
     * call ends in {@link #succeeded}, {@link #failed} or {@link #released}.
     */
    boolean permitsCall() {
        return breaker.tryAcquirePermission();
    }

    /** The permitted call started at {@code startNanos} succeeded. */
    void succeeded(long startNanos) {
        breaker.onSuccess(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * The permitted call started at {@code startNanos} failed in Redis (timeout, lost connection, script error):
     * recorded on the breaker and reported to the listener by kind.
     */
    void failed(long startNanos, BudgetUnavailableException e) {
        breaker.onError(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS, e);
        listener.redisError(e.kind());
        log.debug("budget decision without Redis: {}", e.getMessage());
    }

    /** The permitted call ended with an error that is not Redis's: neither a success nor a failure. */
    void released() {
        breaker.releasePermission();
    }

    /** The outage mode's state: {@link BudgetState#PAUSED} (fail-closed) or {@link BudgetState#FALLBACK_LOCAL}. */
    BudgetState outageState() {
        return outageState;
    }

    /** A shared decision was made: the state is {@link BudgetState#SHARED}. */
    void decidedShared() {
        enter(BudgetState.SHARED);
    }

    /**
     * The outage mode decides for {@code botId}: the state is the outage's; the bot starts drained on resume.
     *
     * @param startDrained applied to the fallback when this is the bot's first decision of the outage, before any
     *                     decision of the bot in the outage returns (the others wait for it)
     * @return whether the fallback starts the bot drained: its first decision of this outage, within max(1 s,
     *     {@code budget.reservation.max.ms}) of the outage's start. Whether this instance decided anything shared
     *     does not matter: another replica's grants of the last second count at the provider all the same (a sender
     *     that had no partitions, or that starts while Redis is down, drains too; later, every shared grant of any
     *     replica is older than Redis's loss)
     */
    boolean decidedInOutage(String botId, Runnable startDrained) {
        enter(outageState);
        touchedInOutage.add(botId);
        long epoch = outageEpoch;
        Long seen = fallbackStartedInOutage.get(botId);
        if (seen != null && seen >= epoch) {
            return false; // started in this outage: its drain was applied before the entry was written (no lock here)
        }
        boolean[] first = new boolean[1];
        // under the bot's entry: a decision racing the first one of this outage waits until its drain is applied (many
        // sending threads fail together at the switch; deciding before the drain granted the fresh fallback's burst)
        fallbackStartedInOutage.compute(botId, (bot, before) -> {
            if (before != null && before >= epoch) {
                return before; // a later outage's entry is never written back to an earlier one
            }
            if (clock.millis() - outageStartMs <= sharedRecentMs) {
                first[0] = true;
                startDrained.run();
            }
            return epoch;
        });
        return first[0];
    }

    /** When this instance's current (or last) outage began, epoch ms of the clock; 0 before the first. */
    long outageStartMs() {
        return outageStartMs;
    }

    /** The bot's drained start could not reach Redis: it is drained when shared mode resumes. */
    void drainOnResume(String botId) {
        touchedInOutage.add(botId);
    }

    /** A penalty Redis did not get: written there when shared mode resumes, with what is left of it then. */
    void keepUnshared(String botId, PenaltyScope scope, String chatId, Duration retryAfter) {
        touchedInOutage.add(botId);
        unshared.add(new Penalty(botId, scope, chatId, clock.millis() + retryAfter.toMillis()));
    }

    /**
     * The first shared call after an outage: drain the bots of the outage in Redis and replay the penalties
     * recorded meanwhile (what is left of them). Throws like any shared call; then it is tried again on the
     * next probe.
     *
     * @param calls counts each call made to {@code s}
     */
    void resumeIfNeeded(BudgetPort s, LongAdder calls) {
        // what is kept, not the state: a shared call racing the switch can put the state back to SHARED first
        if (touchedInOutage.isEmpty() && unshared.isEmpty()) {
            return;
        }
        for (String bot : List.copyOf(touchedInOutage)) {
            // removed before the drain (a review): a fallback decision for the bot after it adds it back, so its grants
            // are drained on the next resume instead of being lost with a removal after the drain
            if (!touchedInOutage.remove(bot)) {
                continue; // another thread drains it
            }
            calls.increment();
            try {
                s.startDrained(bot);
            } catch (RuntimeException e) {
                touchedInOutage.add(bot);
                throw e;
            }
        }
        Penalty p;
        // taken before it is replayed (a review: with peek then poll, two resuming threads replayed one penalty twice
        // and dropped the next one unreplayed)
        while ((p = unshared.poll()) != null) {
            long left = p.untilMs() - clock.millis();
            if (left > 0) {
                calls.increment();
                try {
                    s.penalize(p.botId(), p.scope(), p.chatId(), Duration.ofMillis(left));
                } catch (RuntimeException e) {
                    unshared.add(p);
                    throw e;
                }
            }
        }
    }

    private void enter(BudgetState next) {
        if (state == next) { // every decision passes here: no lock unless the state changes
            return;
        }
        synchronized (nanosInState) {
            if (state == next) {
                return;
            }
            long now = System.nanoTime();
            nanosInState.merge(state, now - stateSinceNanos, Long::sum);
            log.warn("budget state {} -> {}", state, next);
            if (state == BudgetState.SHARED) {
                outageStartMs = clock.millis(); // before the epoch: a reader of the new epoch sees this outage's start
                outageEpoch++; // a new outage: each bot's fallback starts drained again (decidedInOutage)
            }
            state = next;
            stateSinceNanos = now;
        }
        listener.stateChanged(next);
    }

    BudgetState state() {
        return state;
    }

    /** Time spent in each state so far, including the current one. */
    Map<BudgetState, Duration> timeInState() {
        synchronized (nanosInState) {
            Map<BudgetState, Duration> out = new EnumMap<>(BudgetState.class);
            long now = System.nanoTime();
            nanosInState.forEach((s, n) -> out.put(s, Duration.ofNanos(n + (s == state ? now - stateSinceNanos : 0))));
            return out;
        }
    }

    /** The circuit breaker's state (CLOSED, OPEN, HALF_OPEN). */
    CircuitBreaker.State circuitState() {
        return breaker.getState();
    }
}
