package dev.sluice.limits;

/**
 * Sliding-window counter: two counters, the current aligned window and the previous one; the
 * previous count is weighted by the part of the window not yet passed. A request at elapsed time
 * {@code e} into the current window passes if
 * {@code previous·(W − e)/W + current + 1 ≤ N} (compared exactly as
 * {@code previous·(W − e) + (current + 1)·W ≤ N·W}).
 *
 * <p>Promise: approximate. Never more than N in an aligned window (so at most
 * {@code N·(⌊T/W⌋ + 2)} in a closed interval of length T, at most 2N in any interval of length W);
 * on smooth traffic close to N per sliding window. Memory per key: three {@code long}s.
 */
public final class SlidingWindowCounter implements RateLimiter {

    private final Rate rate;
    private long windowStart = Long.MIN_VALUE;
    private long current;
    private long previous;

    public SlidingWindowCounter(Rate rate) {
        this.rate = rate;
    }

    @Override
    public Decision tryAcquire(long nowMillis) {
        long w = rate.periodMillis();
        long n = rate.count();
        long start = Math.floorDiv(nowMillis, w) * w;
        if (start > windowStart) {
            previous = (windowStart != Long.MIN_VALUE && start == windowStart + w) ? current : 0;
            current = 0;
            windowStart = start;
        }
        long now = Math.max(nowMillis, windowStart); // time must not go backwards
        long e = now - windowStart;
        if (previous * (w - e) + (current + 1) * w <= n * w) {
            current++;
            return Decision.allow();
        }
        return Decision.refuse(waitFrom(e) + (now - nowMillis));
    }

    /** Smallest ms until a request would pass, from elapsed {@code e} in the current window. */
    private long waitFrom(long e) {
        long w = rate.periodMillis();
        long n = rate.count();
        // Later in this window: previous·(W − e') ≤ (N − current − 1)·W.
        if (previous > 0 && n - current - 1 >= 0) {
            long q = (n - current - 1) * w / previous;
            if (q >= 1) {
                return (w - q) - e;
            }
        }
        // In the next window, previous' = current, current' = 0: current·(W − e2) ≤ (N − 1)·W.
        long e2 = current == 0 ? 0 : Math.max(0, w - (n - 1) * w / current);
        if (e2 <= w - 1) {
            return w - e + e2;
        }
        // The window after that has no previous count.
        return 2 * w - e;
    }

    @Override
    public boolean isIdle(long nowMillis) {
        long w = rate.periodMillis();
        long start = Math.floorDiv(nowMillis, w) * w;
        return (current == 0 && (previous == 0 || start > windowStart))
                || start > windowStart + w
                || (start == windowStart + w && current == 0);
    }

    @Override
    public String toString() {
        return "SlidingWindowCounter[" + rate + "]";
    }
}
