package dev.sluice.limits;

/**
 * Token bucket of capacity {@code b}, refilled continuously at rate {@code r}, starting full; each
 * request takes one token.
 *
 * <p>Exact integer arithmetic: the level is kept in units of {@code 1/period} token, so one token
 * is {@code rate.periodMillis()} units and each millisecond adds exactly {@code rate.count()} units.
 * Only the returned wait is rounded, up to whole ms.
 *
 * <p>Promise: at most {@code b + r·T} admitted in any interval of length {@code T}. Memory per key:
 * two {@code long}s (level and time of the last update).
 */
public final class TokenBucket implements RateLimiter {

    private final Rate rate;
    private final long burst;
    private final long capacity;
    private long level;
    private long lastMillis = Long.MIN_VALUE;

    /**
     * @param rate  refill rate r
     * @param burst capacity b ≥ 1
     */
    public TokenBucket(Rate rate, long burst) {
        if (burst < 1 || burst > 1_000_000_000L) {
            throw new IllegalArgumentException("burst: must be 1..1000000000, got " + burst);
        }
        this.rate = rate;
        this.burst = burst;
        try {
            this.capacity = Math.multiplyExact(burst, rate.periodMillis());
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("burst: " + burst + " too large for rate " + rate, e);
        }
        this.level = capacity;
    }

    @Override
    public Decision tryAcquire(long nowMillis) {
        refill(nowMillis);
        long now = Math.max(nowMillis, lastMillis);
        if (level >= rate.periodMillis()) {
            level -= rate.periodMillis();
            return Decision.allow();
        }
        long wait = GcraPolicy.ceilDiv(rate.periodMillis() - level, rate.count());
        return Decision.refuse(wait + (now - nowMillis));
    }

    private void refill(long nowMillis) {
        if (lastMillis == Long.MIN_VALUE) {
            lastMillis = nowMillis;
            return;
        }
        if (nowMillis <= lastMillis) {
            return; // time must not go backwards: no refill
        }
        long gap = nowMillis - lastMillis;
        long missing = capacity - level;
        // Compare before multiplying so a long quiet spell cannot overflow.
        level = gap >= GcraPolicy.ceilDiv(missing, rate.count()) ? capacity : level + gap * rate.count();
        lastMillis = nowMillis;
    }

    /** Whole tokens available at the last update. */
    public long tokens() {
        return level / rate.periodMillis();
    }

    @Override
    public boolean isIdle(long nowMillis) {
        if (lastMillis == Long.MIN_VALUE || level == capacity) {
            return true;
        }
        return nowMillis > lastMillis
                && nowMillis - lastMillis >= GcraPolicy.ceilDiv(capacity - level, rate.count());
    }

    @Override
    public String toString() {
        return "TokenBucket[" + rate + ", burst=" + burst + "]";
    }
}
