package dev.sluice.limits;

/**
 * A rate: {@code count} events per {@code periodMillis} milliseconds, e.g. {@code 5/h}, {@code 30/s},
 * {@code 20/min} (Telegram Bot API FAQ: at most 20 messages per minute per group), {@code 1/s}.
 *
 * <p>All limiters do exact integer arithmetic with the pair (count, period) instead of a rounded
 * emission interval: time is scaled by {@code count}, so one emission interval is exactly
 * {@code periodMillis} scaled units. To keep {@code nowMillis × count} inside a {@code long} for
 * epoch-millisecond instants, {@code count} is at most {@value #MAX_COUNT} and the period at most
 * 366 days.
 *
 * @param count        events per period, 1..{@value #MAX_COUNT}
 * @param periodMillis the period in milliseconds, 1..366 days
 */
public record Rate(long count, long periodMillis) {

    /** Largest accepted count: keeps epoch millis × count below 2^63 until the year 2262. */
    public static final long MAX_COUNT = 1_000_000L;
    private static final long MAX_PERIOD_MILLIS = 366L * 86_400_000L;

    public Rate {
        if (count < 1 || count > MAX_COUNT) {
            throw new IllegalArgumentException("rate: count must be 1.." + MAX_COUNT + ", got " + count);
        }
        if (periodMillis < 1 || periodMillis > MAX_PERIOD_MILLIS) {
            throw new IllegalArgumentException("rate: period must be 1 ms..366 d, got " + periodMillis + " ms");
        }
    }

    /**
     * Parses {@code <count>/<period>}: {@code 5/h}, {@code 30/s}, {@code 20/min}, {@code 1/s},
     * {@code 100/10s}, {@code 1000/d}. Units: ms, s, min (or m), h, d.
     *
     * @throws IllegalArgumentException naming the bad value and the expected form
     */
    public static Rate parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("rate: missing value; expected <count>/<period>, e.g. 5/h, 30/s, 20/min");
        }
        int slash = text.indexOf('/');
        if (slash <= 0 || slash == text.length() - 1) {
            throw new IllegalArgumentException("rate: bad value '" + text
                    + "'; expected <count>/<period>, e.g. 5/h, 30/s, 20/min");
        }
        long count;
        try {
            count = Long.parseLong(text.substring(0, slash).trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("rate: bad count in '" + text
                    + "'; expected a whole number before '/', e.g. 5/h", e);
        }
        long period;
        try {
            period = Durations.parseMillis(text.substring(slash + 1), "rate");
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("rate: bad period in '" + text + "': " + e.getMessage(), e);
        }
        try {
            return new Rate(count, period);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + " (value '" + text + "')", e);
        }
    }

    /** Convenience: {@code count} per second. */
    public static Rate perSecond(long count) {
        return new Rate(count, 1_000L);
    }

    /** Convenience: {@code count} per minute. */
    public static Rate perMinute(long count) {
        return new Rate(count, 60_000L);
    }

    /** Convenience: {@code count} per hour. */
    public static Rate perHour(long count) {
        return new Rate(count, 3_600_000L);
    }

    /**
     * This rate shared among {@code parts} replicas (the sender's local fallback: global rate / max
     * replicas). Exact: {@code count/parts} per period is {@code count} per {@code period × parts}.
     */
    public Rate dividedBy(int parts) {
        if (parts < 1) {
            throw new IllegalArgumentException("parts must be >= 1, got " + parts);
        }
        // count/parts per period == count per (period × parts): exact, no rounding.
        return new Rate(count, Math.multiplyExact(periodMillis, parts));
    }

    /** Most events this rate allows in {@code millis} (real-valued r·T, rounded down). */
    public long eventsIn(long millis) {
        return Math.multiplyExact(millis, count) / periodMillis;
    }

    @Override
    public String toString() {
        String period = Durations.format(periodMillis);
        // "5/h" rather than "5/1h"; Rate.parse reads both.
        return count + "/" + (period.matches("1[a-z]+") ? period.substring(1) : period);
    }
}
