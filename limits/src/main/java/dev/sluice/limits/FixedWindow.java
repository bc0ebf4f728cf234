package dev.sluice.limits;

/**
 * Fixed window: at most {@code N = rate.count()} admitted per window {@code [k·W, (k+1)·W)} with
 * {@code W = rate.periodMillis()}, windows aligned to the epoch.
 *
 * <p>Promise: at most N in each aligned window, but up to {@code 2N} in an interval of length W
 * that straddles a boundary (N at the end of one window, N at the start of the next); in general
 * at most {@code N·(⌊T/W⌋ + 2)} in a closed interval of length T. Memory per key: two {@code long}s
 * (window start, count).
 */
public final class FixedWindow implements RateLimiter {

    private final Rate rate;
    private long windowStart = Long.MIN_VALUE;
    private long count;

    public FixedWindow(Rate rate) {
        this.rate = rate;
    }

    @Override
    public Decision tryAcquire(long nowMillis) {
        long w = rate.periodMillis();
        long start = Math.floorDiv(nowMillis, w) * w;
        if (start > windowStart) {
            windowStart = start;
            count = 0;
        }
        if (count < rate.count()) {
            count++;
            return Decision.allow();
        }
        return Decision.refuse(windowStart + w - nowMillis);
    }

    @Override
    public boolean isIdle(long nowMillis) {
        return count == 0 || Math.floorDiv(nowMillis, rate.periodMillis()) * rate.periodMillis() > windowStart;
    }

    @Override
    public String toString() {
        return "FixedWindow[" + rate + "]";
    }
}
