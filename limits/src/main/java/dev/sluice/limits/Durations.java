package dev.sluice.limits;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses short duration texts such as {@code 1h}, {@code 30min}, {@code 90s}, {@code 250ms},
 * {@code 2d} (and ISO-8601 {@code PT1H}) into whole milliseconds.
 */
public final class Durations {

    private static final Pattern SHORT = Pattern.compile("(\\d*)\\s*([a-z]+)");

    private Durations() {
    }

    /**
     * @param text  the duration text; a missing number means 1 ({@code h} is one hour)
     * @param field the name of the field, used in the error message
     * @return the duration in milliseconds, at least 1
     * @throws IllegalArgumentException naming the field and the bad value
     */
    public static long parseMillis(String text, String field) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException(field + ": empty duration; expected e.g. 1h, 30min, 90s, 250ms");
        }
        String trimmed = text.trim();
        if (trimmed.toUpperCase(Locale.ROOT).startsWith("P")) {
            try {
                long millis = java.time.Duration.parse(trimmed).toMillis();
                if (millis < 1) {
                    throw new IllegalArgumentException(field + ": duration must be at least 1 ms, got '" + text + "'");
                }
                return millis;
            } catch (java.time.format.DateTimeParseException e) {
                throw new IllegalArgumentException(field + ": bad duration '" + text + "'", e);
            }
        }
        Matcher m = SHORT.matcher(trimmed.toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new IllegalArgumentException(field + ": bad duration '" + text
                    + "'; expected a number and a unit (ms, s, min, h, d), e.g. 1h, 30min, 90s");
        }
        long unitMillis = unitMillis(m.group(2));
        if (unitMillis < 0) {
            throw new IllegalArgumentException(field + ": unknown unit '" + m.group(2) + "' in '" + text
                    + "'; expected ms, s, min, h or d");
        }
        long amount;
        try {
            amount = m.group(1).isEmpty() ? 1 : Long.parseLong(m.group(1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(field + ": number too large in '" + text + "'", e);
        }
        if (amount < 1) {
            throw new IllegalArgumentException(field + ": duration must be positive, got '" + text + "'");
        }
        try {
            return Math.multiplyExact(amount, unitMillis);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(field + ": duration too large '" + text + "'", e);
        }
    }

    /** Short text for a duration in ms: the largest unit that divides it ({@code 3600000} → {@code 1h}). */
    public static String format(long millis) {
        long[] units = {86_400_000L, 3_600_000L, 60_000L, 1_000L};
        String[] names = {"d", "h", "min", "s"};
        for (int i = 0; i < units.length; i++) {
            if (millis % units[i] == 0) {
                return (millis / units[i]) + names[i];
            }
        }
        return millis + "ms";
    }

    private static long unitMillis(String unit) {
        switch (unit) {
            case "ms":
                return 1L;
            case "s": case "sec": case "second": case "seconds":
                return 1_000L;
            case "m": case "min": case "minute": case "minutes":
                return 60_000L;
            case "h": case "hr": case "hour": case "hours":
                return 3_600_000L;
            case "d": case "day": case "days":
                return 86_400_000L;
            default:
                return -1L;
        }
    }
}
