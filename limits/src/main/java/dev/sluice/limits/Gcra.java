package dev.sluice.limits;

/**
 * GCRA for one key: one {@code long} of state (the TAT), exact integer arithmetic. See
 * {@link GcraPolicy} for the rule, the units and the rounding.
 *
 * <p>Promise: at most {@code b + r·T} admitted in any interval of length {@code T} (the same as a
 * token bucket with capacity b that starts full; on non-decreasing instants both decide
 * identically). Memory per key: one {@code long}.
 */
public final class Gcra implements RateLimiter {

    private final GcraPolicy policy;
    private long tat = GcraPolicy.EMPTY_TAT;

    public Gcra(Rate rate, long burst) {
        this(new GcraPolicy(rate, burst));
    }

    public Gcra(GcraPolicy policy) {
        this.policy = policy;
    }

    @Override
    public Decision tryAcquire(long nowMillis) {
        GcraPolicy.Result result = policy.decide(tat, nowMillis);
        tat = result.tat();
        return result.decision();
    }

    /** Decides {@code permits} requests at once, all or nothing; see {@link GcraPolicy#decide(long, long, long)}. */
    public Decision tryAcquire(long nowMillis, long permits) {
        GcraPolicy.Result result = policy.decide(tat, nowMillis, permits);
        tat = result.tat();
        return result.decision();
    }

    /** The TAT in scaled units ({@link GcraPolicy#scaledUnitsPerMilli()}), or {@link GcraPolicy#EMPTY_TAT}. */
    public long tat() {
        return tat;
    }

    @Override
    public boolean isIdle(long nowMillis) {
        return policy.millisUntilIdle(tat, nowMillis) == 0;
    }

    @Override
    public String toString() {
        return "Gcra[" + policy.rate() + ", burst=" + policy.burst() + "]";
    }
}
