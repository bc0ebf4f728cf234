package dev.sluice.limits;

/** Feeds a timestamped stream to a limiter and measures what it admitted. Pure, no I/O. */
public final class Evaluator {

    private Evaluator() {
    }

    /**
     * @param instantsMillis request instants in ms, non-decreasing
     * @param limiter        a fresh limiter (it is consumed)
     * @param windowMillis   the window W for {@link Evaluation#maxInWindow()}, ≥ 1
     * @throws IllegalArgumentException if the instants decrease or W &lt; 1
     */
    public static Evaluation evaluate(long[] instantsMillis, RateLimiter limiter, long windowMillis) {
        requireSorted(instantsMillis);
        boolean[] flags = new boolean[instantsMillis.length];
        long admitted = 0;
        for (int i = 0; i < instantsMillis.length; i++) {
            flags[i] = limiter.tryAcquire(instantsMillis[i]).allowed();
            if (flags[i]) {
                admitted++;
            }
        }
        int[] busiest = busiestWindow(instantsMillis, flags, windowMillis);
        return new Evaluation(admitted, instantsMillis.length - admitted, flags, busiest[0], busiest[1],
                windowMillis);
    }

    /**
     * Most selected instants in any window {@code [s, s + W)} and the index of the first of them.
     *
     * @param selected which instants count ({@code null}: all)
     * @return {@code {count, startIndex}}, startIndex -1 when nothing is selected
     */
    public static int[] busiestWindow(long[] instantsMillis, boolean[] selected, long windowMillis) {
        if (windowMillis < 1) {
            throw new IllegalArgumentException("window: must be >= 1 ms, got " + windowMillis);
        }
        int[] kept = new int[instantsMillis.length];
        int n = 0;
        for (int i = 0; i < instantsMillis.length; i++) {
            if (selected == null || selected[i]) {
                kept[n++] = i;
            }
        }
        int best = 0;
        int bestStart = -1;
        int lo = 0;
        for (int hi = 0; hi < n; hi++) {
            while (instantsMillis[kept[hi]] - instantsMillis[kept[lo]] >= windowMillis) {
                lo++;
            }
            if (hi - lo + 1 > best) {
                best = hi - lo + 1;
                bestStart = kept[lo];
            }
        }
        return new int[] {best, bestStart};
    }

    static void requireSorted(long[] instantsMillis) {
        for (int i = 1; i < instantsMillis.length; i++) {
            if (instantsMillis[i] < instantsMillis[i - 1]) {
                throw new IllegalArgumentException("instants: must be non-decreasing, but index " + i + " ("
                        + instantsMillis[i] + ") < index " + (i - 1) + " (" + instantsMillis[i - 1] + ")");
            }
        }
    }
}
