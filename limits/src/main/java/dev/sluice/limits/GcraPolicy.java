package dev.sluice.limits;

/**
 * The GCRA decision as a pure function of one stored number, for callers that keep the state
 * themselves (a Kafka Streams key-value store for the topology's per-chat policy limit, a map
 * entry in {@link KeyedLimiter}).
 *
 * <p>GCRA (generic cell rate algorithm, ITU-T I.371) keeps one number per key, the TAT
 * (theoretical arrival time). With emission interval {@code I = 1/r} a request at {@code t} passes
 * if {@code t ≥ TAT − (b − 1)·I}, then {@code TAT ← max(TAT, t) + I}. It decides exactly like a
 * token bucket of capacity {@code b} refilled at {@code r} that starts full.
 *
 * <p><b>Exact integer arithmetic, no rounding.</b> The TAT is kept in <em>scaled units</em> of
 * {@code 1/count} ms, i.e. instants are multiplied by {@code rate.count()}; then one emission
 * interval {@code I = period/count} ms is exactly {@code rate.periodMillis()} scaled units. Only the
 * returned wait is rounded, and it is rounded up to whole ms. A TAT stored with one rate must not be
 * read with a rate of another count ({@link #scaledUnitsPerMilli()} says the scale).
 *
 * <p>Promise: at most {@code b + r·T} admitted in any interval of length {@code T}. Memory: one
 * {@code long} per key.
 */
public final class GcraPolicy {

    /** The TAT of a key never seen: admits a full burst. */
    public static final long EMPTY_TAT = Long.MIN_VALUE;

    private final Rate rate;
    private final long burst;
    private final long toleranceScaled;

    /**
     * @param rate  sustained rate r
     * @param burst b ≥ 1: how many requests may pass at one instant after a quiet spell
     */
    public GcraPolicy(Rate rate, long burst) {
        if (rate == null) {
            throw new IllegalArgumentException("rate: must not be null");
        }
        if (burst < 1 || burst > 1_000_000_000L) {
            throw new IllegalArgumentException("burst: must be 1..1000000000, got " + burst);
        }
        this.rate = rate;
        this.burst = burst;
        try {
            this.toleranceScaled = Math.multiplyExact(burst, rate.periodMillis()) - rate.periodMillis();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("burst: " + burst + " too large for rate " + rate, e);
        }
    }

    /** The outcome of one decision: the decision and the TAT to store (unchanged when refused). */
    public record Result(Decision decision, long tat) {
    }

    public Rate rate() {
        return rate;
    }

    public long burst() {
        return burst;
    }

    /** How many scaled TAT units make one millisecond: {@code rate.count()}. */
    public long scaledUnitsPerMilli() {
        return rate.count();
    }

    /**
     * Decides one request.
     *
     * @param tat       the stored TAT in scaled units, or {@link #EMPTY_TAT}
     * @param nowMillis the instant of the request, epoch ms
     * @return the decision and the new TAT; when refused, {@code waitMillis} is
     *         {@code ceil((TAT − (b−1)·I − t) in ms)}
     */
    public Result decide(long tat, long nowMillis) {
        return decide(tat, nowMillis, 1);
    }

    /**
     * Decides {@code permits} requests at one instant, all or nothing (a batch of sends): they pass
     * iff {@code t ≥ TAT − (b − permits)·I}, then {@code TAT ← max(TAT, t) + permits·I}; the same as
     * {@code permits} single decisions at {@code t} if all of them pass.
     *
     * @param permits 1..burst
     * @throws IllegalArgumentException if {@code permits} is outside 1..burst (such a batch could never pass)
     */
    public Result decide(long tat, long nowMillis, long permits) {
        if (permits < 1 || permits > burst) {
            throw new IllegalArgumentException("permits: must be 1.." + burst + " (the burst), got " + permits);
        }
        long now = Math.multiplyExact(nowMillis, rate.count());
        long base = Math.max(tat, now);
        long ahead = base - now;
        long tolerance = toleranceScaled - (permits - 1) * rate.periodMillis();
        if (ahead <= tolerance) {
            return new Result(Decision.allow(), Math.addExact(base, permits * rate.periodMillis()));
        }
        long waitScaled = ahead - tolerance;
        return new Result(Decision.refuse(ceilDiv(waitScaled, rate.count())), tat);
    }

    /**
     * Milliseconds from {@code nowMillis} until a key with this TAT is as good as never seen (a full
     * burst again); 0 if it already is. Use it as the TTL of a stored TAT (rounded up).
     */
    public long millisUntilIdle(long tat, long nowMillis) {
        long now = Math.multiplyExact(nowMillis, rate.count());
        return tat <= now ? 0L : ceilDiv(tat - now, rate.count());
    }

    static long ceilDiv(long x, long y) {
        return -Math.floorDiv(-x, y);
    }

    @Override
    public String toString() {
        return "GcraPolicy[rate=" + rate + ", burst=" + burst + "]";
    }
}
