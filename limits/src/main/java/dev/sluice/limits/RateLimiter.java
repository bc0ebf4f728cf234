package dev.sluice.limits;

import java.time.Clock;

/**
 * One rate limiter for one key. Pure and single-threaded: no I/O, no locks, no reading of the
 * system clock. Time is passed in as epoch milliseconds (or read from an injected {@link Clock}),
 * and must not go backwards: an instant earlier than one already seen gets no refill (it may be
 * refused where the later instant would not).
 *
 * <p>A refused request changes no state. Not thread-safe; guard with the caller's own lock or
 * confine to one thread (one Kafka Streams task, one sender lane).
 */
public interface RateLimiter {

    /** Decides one request at {@code nowMillis} (epoch ms, or any monotonic ms scale). */
    Decision tryAcquire(long nowMillis);

    /**
     * Whether this limiter's state at {@code nowMillis} is the same as a fresh one's (a full burst
     * would pass), so a keyed map may drop it without changing any decision.
     */
    boolean isIdle(long nowMillis);

    /** Decides one request at {@code clock.millis()}; pass {@code Clock.fixed} or a test clock in tests. */
    default Decision tryAcquire(Clock clock) {
        return tryAcquire(clock.millis());
    }
}
