package dev.sluice.sender.idempotency;

import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.lettuce.core.RedisException;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * The sent marks' circuit breaker (Resilience4j), for the synchronous calls a sending thread waits on (the mark read
 * before a send, the SENT write after it): after {@code minimumCalls} failed calls in a row it opens, and for
 * {@code probeInterval} every such call fails at once instead of waiting out the command timeout; then one call probes.
 * A disconnected Redis fails fast by itself, but a stalled one (a long fork, a paused VM, SIGSTOP) answers nothing:
 * without the breaker every message waited the timeout once per mark call, one after another for the heads of a batch,
 * and the fallback budget's senders delivered 2.2 msg/s instead of their share of 30 (RedisStallIT). Failing fast changes
 * only when the caller learns it: the caller's path for an unreachable mark is the same (send without the check, keep
 * the write for later or warn). The budget's own breaker is {@code RedisOutage}'s; the settings are the same keys.
 *
 * <p>Thread-safe (Resilience4j's breaker): any sending thread calls {@link #call}.
 */
final class MarksCircuit {
    private final CircuitBreaker breaker;

    /**
     * @param minimumCalls  failed calls in a row that open the circuit ({@code budget.circuit.minimum.calls})
     * @param probeInterval how long it stays open before a probe ({@code budget.redis.probe.interval.ms})
     */
    MarksCircuit(int minimumCalls, Duration probeInterval) {
        this.breaker = CircuitBreaker.of("sluice-sent-marks-redis", CircuitBreakerConfig.custom()
                .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .slidingWindowSize(minimumCalls)
                .minimumNumberOfCalls(minimumCalls)
                .failureRateThreshold(100)
                .waitDurationInOpenState(probeInterval)
                .permittedNumberOfCallsInHalfOpenState(1)
                .automaticTransitionFromOpenToHalfOpenEnabled(false)
                .recordExceptions(RedisException.class)
                .build());
    }

    /**
     * Runs {@code redisCall} unless the circuit is open.
     *
     * @throws RedisException the call's own, or at once while the circuit is open (the message says so)
     */
    <T> T call(Supplier<T> redisCall) {
        try {
            return breaker.executeSupplier(redisCall);
        } catch (CallNotPermittedException e) {
            throw new RedisException("Redis did not answer the last sent-mark calls; not asked again before its next "
                    + "probe (circuit " + breaker.getState() + ")");
        }
    }

    CircuitBreaker.State state() {
        return breaker.getState();
    }
}
