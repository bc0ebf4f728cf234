package dev.sluice.limits;

/**
 * The smallest lossless burst for a rate on a history, and the stretch that forces it.
 *
 * @param rate              the rate r
 * @param minLosslessBurst  smallest b ≥ 1 with which a token bucket (or GCRA) at r refuses nothing
 * @param worstStartIndex   index of the first event of the worst stretch (-1 for an empty history)
 * @param worstEndIndex     index of its last event (-1 for an empty history)
 * @param worstStartMillis  instant of the first event of the worst stretch (epoch ms; 0 if empty)
 * @param worstEndMillis    instant of its last event (epoch ms; 0 if empty)
 */
public record CapacityPlan(Rate rate, long minLosslessBurst, int worstStartIndex, int worstEndIndex,
                           long worstStartMillis, long worstEndMillis) {

    /** Events in the worst stretch, both ends included. */
    public int worstEvents() {
        return worstStartIndex < 0 ? 0 : worstEndIndex - worstStartIndex + 1;
    }
}
