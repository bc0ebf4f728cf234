package dev.sluice.limits;

/**
 * What a limiter did to a stream.
 *
 * @param admitted          requests admitted
 * @param refused           requests refused
 * @param admittedFlags     per request, in stream order, whether it was admitted (a copy)
 * @param maxInWindow       most admitted requests in any window {@code [s, s + windowMillis)}
 * @param busiestStartIndex index of the first admitted request of that busiest window, -1 if none
 * @param windowMillis      the window length W in ms
 */
public record Evaluation(long admitted, long refused, boolean[] admittedFlags, int maxInWindow,
                         int busiestStartIndex, long windowMillis) {

    public Evaluation {
        admittedFlags = admittedFlags.clone();
    }

    /** Whether request {@code index} (stream order) was admitted. */
    public boolean admitted(int index) {
        return admittedFlags[index];
    }

    @Override
    public boolean[] admittedFlags() {
        return admittedFlags.clone();
    }
}
