package dev.sluice.testkit;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Analysis of event times for reports and tests (no dependencies, so cheap to load). */
public final class SlidingWindows {

    private SlidingWindows() {
    }

    /**
     * The largest number of {@code timesMillis} that fit in one sliding window of {@code windowMillis}
     * (times {@code a <= b} share a window iff {@code b - a < windowMillis}). O(n) two pointers on sorted
     * input; unsorted input is sorted first (a copy).
     *
     * @throws IllegalArgumentException if {@code windowMillis < 1}
     */
    public static int maxPerWindow(List<Long> timesMillis, long windowMillis) {
        if (windowMillis < 1) {
            throw new IllegalArgumentException("windowMillis: must be >= 1, was " + windowMillis);
        }
        List<Long> t = timesMillis;
        for (int i = 1; i < t.size(); i++) {
            if (t.get(i) < t.get(i - 1)) {
                t = new ArrayList<>(timesMillis);
                Collections.sort(t);
                break;
            }
        }
        int max = 0;
        int start = 0;
        for (int end = 0; end < t.size(); end++) {
            while (t.get(end) - t.get(start) >= windowMillis) {
                start++;
            }
            max = Math.max(max, end - start + 1);
        }
        return max;
    }

    /**
     * The largest {@link #maxPerWindow} over the groups of {@code items} by {@code keyOf}: e.g. the most messages any one
     * bot (or chat) had within a sliding window.
     */
    public static <T> int maxPerKey(List<T> items, java.util.function.Function<T, String> keyOf,
                                    java.util.function.ToLongFunction<T> timeMillisOf, long windowMillis) {
        java.util.Map<String, List<Long>> times = new java.util.LinkedHashMap<>();
        for (T item : items) {
            times.computeIfAbsent(keyOf.apply(item), k -> new ArrayList<>()).add(timeMillisOf.applyAsLong(item));
        }
        int max = 0;
        for (List<Long> t : times.values()) {
            max = Math.max(max, maxPerWindow(t, windowMillis));
        }
        return max;
    }
}
