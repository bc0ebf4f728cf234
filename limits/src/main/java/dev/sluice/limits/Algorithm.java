package dev.sluice.limits;

import java.util.Locale;

/**
 * The five algorithms, with a factory and each one's promised bound. The window algorithms use
 * {@code N = rate.count()} per window {@code W = rate.periodMillis()} and ignore the burst; token
 * bucket and GCRA use rate r and burst b.
 */
public enum Algorithm {
    /** Promise: ≤ N per aligned window; up to 2N across a boundary. Memory: 2 longs per key. */
    FIXED_WINDOW("fixed-window"),
    /** Promise: exact, ≤ N in any window of length W. Memory: up to N longs per key. */
    SLIDING_LOG("sliding-log"),
    /** Promise: approximate, ≤ N per aligned window, up to 2N in a window of length W. Memory: 3 longs per key. */
    SLIDING_WINDOW_COUNTER("sliding-window-counter"),
    /** Promise: ≤ b + r·T in any interval T. Memory: 2 longs per key. */
    TOKEN_BUCKET("token-bucket"),
    /** Promise: ≤ b + r·T in any interval T. Memory: 1 long per key. */
    GCRA("gcra");

    private final String label;

    Algorithm(String label) {
        this.label = label;
    }

    /** Kebab-case name used in CLI output and JSON, e.g. {@code sliding-window-counter}. */
    public String label() {
        return label;
    }

    /** A fresh limiter for one key. */
    public RateLimiter create(Rate rate, long burst) {
        switch (this) {
            case FIXED_WINDOW:
                return new FixedWindow(rate);
            case SLIDING_LOG:
                return new SlidingLog(rate);
            case SLIDING_WINDOW_COUNTER:
                return new SlidingWindowCounter(rate);
            case TOKEN_BUCKET:
                return new TokenBucket(rate, burst);
            case GCRA:
                return new Gcra(rate, burst);
            default:
                throw new IllegalStateException(name());
        }
    }

    /**
     * The promised bound: the most requests this algorithm may admit whose instants (ms) all lie in
     * one closed interval {@code [s, s + spanMillis]}.
     */
    public long maxAdmitted(Rate rate, long burst, long spanMillis) {
        long n = rate.count();
        long w = rate.periodMillis();
        switch (this) {
            case FIXED_WINDOW:
            case SLIDING_WINDOW_COUNTER:
                return n * (spanMillis / w + 2);
            case SLIDING_LOG:
                return n * GcraPolicy.ceilDiv(spanMillis + 1, w);
            case TOKEN_BUCKET:
            case GCRA:
                return burst + rate.eventsIn(spanMillis);
            default:
                throw new IllegalStateException(name());
        }
    }

    /** Parses a label ({@code gcra}, {@code token-bucket}, ...) or an enum name. */
    public static Algorithm parse(String text) {
        for (Algorithm a : values()) {
            if (a.label.equalsIgnoreCase(text) || a.name().equalsIgnoreCase(text)) {
                return a;
            }
        }
        throw new IllegalArgumentException("algorithm: unknown '" + text + "'; expected one of "
                + java.util.Arrays.stream(values()).map(Algorithm::label).toList());
    }

    @Override
    public String toString() {
        return label.toLowerCase(Locale.ROOT);
    }
}
