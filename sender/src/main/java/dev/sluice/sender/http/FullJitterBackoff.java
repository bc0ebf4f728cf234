package dev.sluice.sender.http;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * Exponential backoff with full jitter and a cap (AWS Architecture Blog, "Exponential Backoff And Jitter"):
 * the n-th wait is uniform in [0, min(cap, base·2^(n−1))]. Full jitter spreads the retries of many clients
 * that were throttled together, instead of sending them back as one wave. Immutable; the random source is
 * passed in so tests can pin it.
 *
 * @param base the ceiling of the first wait, &gt; 0
 * @param cap  the largest ceiling, &ge; base
 */
public record FullJitterBackoff(Duration base, Duration cap) {

    public FullJitterBackoff {
        if (base.isNegative() || base.isZero()) {
            throw new IllegalArgumentException("base must be positive, was " + base);
        }
        if (cap.compareTo(base) < 0) {
            throw new IllegalArgumentException("cap " + cap + " is below base " + base);
        }
    }

    /** The ceiling of the {@code attempt}-th wait (1-based): min(cap, base·2^(attempt−1)), in ms. */
    public long ceilingMs(int attempt) {
        if (attempt < 1) {
            throw new IllegalArgumentException("attempt is 1-based, was " + attempt);
        }
        int shift = Math.min(attempt - 1, 62);
        long baseMs = base.toMillis();
        long ceiling = shift >= Long.numberOfLeadingZeros(baseMs) - 1 ? Long.MAX_VALUE : baseMs << shift;
        return Math.min(ceiling, cap.toMillis());
    }

    /** The {@code attempt}-th wait: uniform in [1 ms, ceiling] (never zero: a zero wait would be a busy retry). */
    public Duration delay(int attempt, RandomGenerator random) {
        long ceiling = ceilingMs(attempt);
        return Duration.ofMillis(Math.max(1, random.nextLong(ceiling + 1)));
    }
}
