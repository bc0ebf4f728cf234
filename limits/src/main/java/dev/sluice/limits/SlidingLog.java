package dev.sluice.limits;

/**
 * Sliding log: keeps the instant of every admitted request of the last window; a request at
 * {@code t} passes if fewer than {@code N = rate.count()} were admitted in {@code (t − W, t]},
 * {@code W = rate.periodMillis()}.
 *
 * <p>Promise: exact; at most N admitted in any interval of length W (at most
 * {@code N·⌈(T+1)/W⌉} in a closed interval of T ms). Memory per key: up to N {@code long}s, which
 * is why it suits small N.
 */
public final class SlidingLog implements RateLimiter {

    private final Rate rate;
    private long[] ring = new long[4];
    private int head;
    private int size;

    public SlidingLog(Rate rate) {
        if (rate.count() > Integer.MAX_VALUE / 2) {
            throw new IllegalArgumentException("rate: count too large for a sliding log: " + rate);
        }
        this.rate = rate;
    }

    @Override
    public Decision tryAcquire(long nowMillis) {
        evict(nowMillis);
        if (size < rate.count()) {
            push(nowMillis);
            return Decision.allow();
        }
        // Full: the oldest admitted instant e leaves the window at e + W.
        return Decision.refuse(Math.max(1L, ring[head] + rate.periodMillis() - nowMillis));
    }

    private void evict(long nowMillis) {
        long cutoff = nowMillis - rate.periodMillis();
        while (size > 0 && ring[head] <= cutoff) {
            head = (head + 1) % ring.length;
            size--;
        }
    }

    private void push(long instant) {
        if (size == ring.length) {
            long[] grown = new long[ring.length * 2];
            for (int i = 0; i < size; i++) {
                grown[i] = ring[(head + i) % ring.length];
            }
            ring = grown;
            head = 0;
        }
        // Keep the log sorted even if an instant goes backwards: store the latest seen instead.
        long latest = size == 0 ? instant : Math.max(instant, ring[(head + size - 1) % ring.length]);
        ring[(head + size) % ring.length] = latest;
        size++;
    }

    @Override
    public boolean isIdle(long nowMillis) {
        return size == 0 || ring[(head + size - 1) % ring.length] <= nowMillis - rate.periodMillis();
    }

    @Override
    public String toString() {
        return "SlidingLog[" + rate + "]";
    }
}
