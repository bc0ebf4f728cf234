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

    /**
     * Events per second over the window, or over the time since its oldest event's second (or since creation) when that
     * is shorter, at least 1 s. So a burst after an idle spell is measured over its own duration: over the whole
     * minute, a bot that starts sending at 25/s after a quiet minute would read 25/60 per second in its first second,
     * and its backlog's drain time 60 times too long (the topology folded its routine notifications for pressure).
     */
    synchronized double perSecond() {
        long now = clock.millis();
        long sec = Math.floorDiv(now, 1000);
        long oldest = Long.MAX_VALUE;
        long total = 0;
        for (int i = 0; i < SECONDS; i++) {
            if (bucketSecond[i] > sec - SECONDS && bucketSecond[i] <= sec && counts[i] > 0) {
                total += counts[i];
                oldest = Math.min(oldest, bucketSecond[i]);
            }
        }
        if (total == 0) {
            return 0;
        }
        long since = Math.max(createdMillis, oldest * 1000);
        double seconds = Math.min(SECONDS, Math.max(1.0, (now - since) / 1000.0));
        return total / seconds;
    }
}
