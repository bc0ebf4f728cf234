package dev.sluice.metrics;

import java.time.Clock;

/**
 * Events in the last 60 seconds, in 60 one-second buckets (so the sum lags at most one second), and which of those
 * seconds were busy (an event, or marked by {@link #markBusy}): {@link #perSecond} is a rate over the busy seconds.
 * Thread-safe; time from an injectable clock.
 */
final class MinuteWindow {
    static final int SECONDS = 60;
    private final Clock clock;
    private final long[] counts = new long[SECONDS];
    private final long[] bucketSecond = new long[SECONDS];
    private final boolean[] busy = new boolean[SECONDS];

    MinuteWindow(Clock clock) {
        this.clock = clock;
        java.util.Arrays.fill(bucketSecond, Long.MIN_VALUE);
    }

    synchronized void add(long n) {
        counts[bucket(Math.floorDiv(clock.millis(), 1000))] += n;
    }

    /**
     * Marks the whole seconds of [fromMillis, toMillis] still in the window as busy (a backlog was waiting then); the
     * second {@code toMillis} falls in is left out: it has just begun, and counting it whole, with the few grants it
     * holds yet, would understate the rate.
     */
    synchronized void markBusy(long fromMillis, long toMillis) {
        long sec = Math.floorDiv(clock.millis(), 1000);
        long to = Math.min(sec, Math.floorDiv(toMillis, 1000) - 1);
        for (long s = Math.max(sec - SECONDS + 1, Math.floorDiv(fromMillis, 1000)); s <= to; s++) {
            busy[bucket(s)] = true;
        }
    }

    /** The index of second {@code sec}'s bucket, emptied first when it still holds an older second. */
    private int bucket(long sec) {
        int i = (int) Math.floorMod(sec, SECONDS);
        if (bucketSecond[i] != sec) {
            bucketSecond[i] = sec;
            counts[i] = 0;
            busy[i] = false;
        }
        return i;
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
     * Events per busy second of the window (seconds with an event or marked by {@link #markBusy}; at least 1), 0 without
     * events. A rate over the whole minute read a burst after a quiet spell at a fraction of its rate (25/s after a
     * quiet minute: 25/60 per second in its first second), and its backlog's drain time that many times too long (the
     * topology folded the bot's routine notifications for pressure); quiet seconds are not draining time.
     */
    synchronized double perSecond() {
        long sec = Math.floorDiv(clock.millis(), 1000);
        long total = 0;
        int busySeconds = 0;
        for (int i = 0; i < SECONDS; i++) {
            if (bucketSecond[i] > sec - SECONDS && bucketSecond[i] <= sec && (counts[i] > 0 || busy[i])) {
                total += counts[i];
                busySeconds++;
            }
        }
        return total == 0 ? 0 : total / (double) Math.max(1, busySeconds);
    }

}
