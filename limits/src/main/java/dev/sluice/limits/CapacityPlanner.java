package dev.sluice.limits;

/**
 * Answers "what burst loses nothing on my history?" for a token bucket (equally GCRA) at rate r.
 *
 * <p>A bucket of capacity b that starts full admits every event of {@code t_0 ≤ … ≤ t_{n−1}} iff
 * for all {@code i ≤ j}: {@code (j − i + 1) ≤ b + r·(t_j − t_i)}. With {@code a_j = j/r − t_j} that
 * is {@code b ≥ r·(a_j − a_i) + 1}, so the smallest b is
 * {@code ⌈max over i ≤ j of r·(a_j − a_i) + 1⌉} (at least 1), found in one pass keeping the minimum
 * of {@code a_i} so far. The pair (i, j) reaching the maximum is the worst stretch.
 *
 * <p>Exact: in units of {@code 1/count} ms, {@code A_j = j·period − count·t_j}, and
 * {@code b = ⌈(A_j − min A_i + period) / period⌉}, all in {@code long} with overflow checks. On ties
 * the earliest stretch is kept.
 */
public final class CapacityPlanner {

    private CapacityPlanner() {
    }

    /**
     * @param instantsMillis event instants in ms, non-decreasing
     * @param rate           the sustained rate r
     * @throws IllegalArgumentException if the instants decrease
     */
    public static CapacityPlan minLosslessBurst(long[] instantsMillis, Rate rate) {
        Evaluator.requireSorted(instantsMillis);
        if (instantsMillis.length == 0) {
            return new CapacityPlan(rate, 1, -1, -1, 0, 0);
        }
        long period = rate.periodMillis();
        long minA = Long.MAX_VALUE;
        int minIndex = -1;
        long bestValue = Long.MIN_VALUE;
        int bestI = -1;
        int bestJ = -1;
        for (int j = 0; j < instantsMillis.length; j++) {
            long a = Math.subtractExact(Math.multiplyExact((long) j, period),
                    Math.multiplyExact(rate.count(), instantsMillis[j]));
            if (a < minA) {
                minA = a;
                minIndex = j;
            }
            long value = Math.addExact(Math.subtractExact(a, minA), period);
            if (value > bestValue) {
                bestValue = value;
                bestI = minIndex;
                bestJ = j;
            }
        }
        long burst = Math.max(1L, GcraPolicy.ceilDiv(bestValue, period));
        return new CapacityPlan(rate, burst, bestI, bestJ, instantsMillis[bestI], instantsMillis[bestJ]);
    }
}
