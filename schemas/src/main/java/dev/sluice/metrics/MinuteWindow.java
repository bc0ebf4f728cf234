package dev.sluice.metrics;

import java.time.Clock;

/**
 * Events in the last 60 seconds, in 60 one-second buckets (so the sum lags at most one second).
 * Thread-safe; time from an injectable clock.
 */
final class MinuteWindow {
    static final int SECONDS = 60;
    private final Clock clock;
    private final long[] counts = new long[SECONDS];
    private final long[] bucketSecond = new long[SECONDS];
    private final long createdMillis;

    MinuteWindow(Clock clock) {
        this.clock = clock;
        this.createdMillis = clock.millis();
        java.util.Arrays.fill(bucketSecond, Long.MIN_VALUE);
    }

    synchronized void add(long n) {
        long sec = Math.floorDiv(clock.millis(), 1000);
        int i = (int) Math.floorMod(sec, SECONDS);
        if (bucketSecond[i] != sec) {
            bucketSecond[i] = sec;
            counts[i] = 0;
        }
        counts[i] += n;
    }

    /** Events in the 60 s ending now. */
    synchronized long sum() {
        long sec = Math.floorDiv(clock.millis(), 1000);
        long total = 0;
        for (int i = 0; i < SECONDS; i++) {
            if (bucketSecond[i] > sec - SECONDS && bucketSecond[i] <= sec) {
                total += counts[i];
            }
        }
        return total;
    }

    /** Events per second over the window, or over the time since creation when that is shorter (at least 1 s). */
    double perSecond() {
        double seconds = Math.min(SECONDS, Math.max(1.0, (clock.millis() - createdMillis) / 1000.0));
        return sum() / seconds;
    }
}
