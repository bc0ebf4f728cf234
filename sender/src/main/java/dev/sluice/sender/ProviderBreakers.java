package dev.sluice.sender;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Resilience4j circuit breaker per bot over the provider: when 5xx answers and connect errors dominate
 * the recent calls, the breaker opens and no lane of the bot calls the provider (each waits
 * {@code sender.breaker.open.ms}); then a few calls probe half-open and close it again on success. Spending
 * the attempts of every message into an outage would turn it into a wave of FAILED results.
 *
 * <p>Only outages count as failures: a 429, a 403 or another 4xx is an answer of a working provider.
 *
 * <p>Its transitions are logged like the budget's circuit ({@code CircuitLog}): opening (WARN, with the share of
 * failed calls) and closing (INFO) are the outage's state changes; each probe (OPEN -> HALF_OPEN -> OPEN every
 * {@code sender.breaker.open.ms} while the provider stays down) is at DEBUG, so a long outage costs two lines.
 *
 * <p>Thread-safe: the registry and the map of breakers by bot are concurrent; any sending thread calls it, and a
 * transition is logged on the sending thread that caused it.
 */
final class ProviderBreakers {
    private static final Logger log = LoggerFactory.getLogger(ProviderBreakers.class);

    /** Transient failures (5xx, I/O) recorded as breaker errors. */
    static final class ProviderOutage extends RuntimeException {
        ProviderOutage(String message) {
            super(message, null, false, false);
        }
    }

    private final CircuitBreakerRegistry registry;
    /**
     * The registry's breaker of each bot, looked up once (issue 19: a call takes and records a permit several times,
     * and each registry lookup built the breaker's name anew).
     */
    private final java.util.concurrent.ConcurrentMap<String, CircuitBreaker> byBot = new java.util.concurrent.ConcurrentHashMap<>();
    private final Duration openWait;

    /**
     * @param failureRatePercent opens at or above this share of failed calls among the last {@code window}
     * @param window             calls in the sliding window (also the minimum before it may open)
     * @param openWait           how long the breaker stays open before half-open probes
     * @param halfOpenCalls      probe calls allowed half-open
     */
    ProviderBreakers(float failureRatePercent, int window, Duration openWait, int halfOpenCalls) {
        this.openWait = openWait;
        this.registry = CircuitBreakerRegistry.of(CircuitBreakerConfig.custom()
                .failureRateThreshold(failureRatePercent)
                .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .slidingWindowSize(window)
                .minimumNumberOfCalls(window)
                .waitDurationInOpenState(openWait)
                .permittedNumberOfCallsInHalfOpenState(halfOpenCalls)
                .automaticTransitionFromOpenToHalfOpenEnabled(false)
                .recordExceptions(ProviderOutage.class)
                .build());
    }

    CircuitBreaker of(String botId) {
        CircuitBreaker breaker = byBot.get(botId);
        return breaker != null ? breaker : byBot.computeIfAbsent(botId, this::create);
    }

    private CircuitBreaker create(String botId) {
        CircuitBreaker breaker = registry.circuitBreaker("provider-" + botId);
        breaker.getEventPublisher().onStateTransition(e -> logTransition(botId, breaker, e.getStateTransition()));
        return breaker;
    }

    private void logTransition(String botId, CircuitBreaker breaker, CircuitBreaker.StateTransition t) {
        if (dev.sluice.sender.budget.CircuitLog.isProbe(t)) {
            log.debug("provider breaker of bot {}: {}", botId, t);
        } else if (t.getToState() == CircuitBreaker.State.OPEN) {
            log.warn("provider breaker of bot {} opened: {} % of its last calls failed (5xx, connection errors, "
                    + "timeouts); no call of the bot goes out for {} ms at a time, then a probe", botId,
                    Math.round(breaker.getMetrics().getFailureRate()), openWait.toMillis());
        } else if (t.getToState() == CircuitBreaker.State.CLOSED) {
            log.info("provider breaker of bot {} closed: its probe calls were answered", botId);
        } else {
            log.info("provider breaker of bot {}: {}", botId, t);
        }
    }

    /** Whether a call of {@code botId} may go out now; if true, exactly one of the record methods must follow. */
    boolean tryAcquire(String botId) {
        return of(botId).tryAcquirePermission();
    }

    void recordAnswer(String botId, long durationMs) {
        of(botId).onSuccess(durationMs, TimeUnit.MILLISECONDS);
    }

    void recordOutage(String botId, long durationMs, String description) {
        of(botId).onError(durationMs, TimeUnit.MILLISECONDS, new ProviderOutage(description));
    }

    /** A permission taken but no call made (e.g. the budget refused): give it back. */
    void release(String botId) {
        of(botId).releasePermission();
    }

    Duration openWait() {
        return openWait;
    }

    CircuitBreaker.State state(String botId) {
        return of(botId).getState();
    }
}
