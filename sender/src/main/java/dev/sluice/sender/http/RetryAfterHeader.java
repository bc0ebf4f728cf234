package dev.sluice.sender.http;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Reads an HTTP {@code Retry-After} header value (RFC 9110, section 10.2.3): either delay-seconds (a
 * non-negative integer) or an HTTP-date (section 5.6.7: the preferred IMF-fixdate
 * {@code Sun, 06 Nov 1994 08:49:37 GMT}, and the obsolete RFC 850 and asctime forms a recipient must still
 * accept). A date in the past means "now" ({@link Duration#ZERO}); anything else is garbage and yields
 * empty, so the caller falls back to the next source (a JSON field, then backoff).
 */
public final class RetryAfterHeader {
    private static final Pattern DELAY_SECONDS = Pattern.compile("\\d{1,10}");
    /** RFC 850: {@code Sunday, 06-Nov-94 08:49:37 GMT}. */
    private static final Pattern RFC_850_DAY = Pattern.compile("(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (.*)");
    /** The part after the day name; the day is checked once the century is known. */
    private static final DateTimeFormatter RFC_850 =
            DateTimeFormatter.ofPattern("dd-MMM-yy HH:mm:ss 'GMT'", Locale.ENGLISH);
    /** asctime: {@code Sun Nov  6 08:49:37 1994} (the day padded with a space). */
    private static final DateTimeFormatter ASCTIME =
            DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.ENGLISH);

    private RetryAfterHeader() {
    }

    /**
     * @param value the header value, may be null
     * @param now   the current instant (from the transport's injectable clock)
     * @return the wait from {@code now}: delay-seconds as given, an HTTP-date minus {@code now} (zero when past),
     *     or empty when the value is missing or matches neither form
     */
    public static Optional<Duration> parse(String value, Instant now) {
        if (value == null) {
            return Optional.empty();
        }
        String v = value.trim();
        if (v.isEmpty()) {
            return Optional.empty();
        }
        if (DELAY_SECONDS.matcher(v).matches()) {
            return Optional.of(Duration.ofSeconds(Long.parseLong(v)));
        }
        Instant at = httpDate(v, now);
        if (at == null) {
            return Optional.empty();
        }
        Duration wait = Duration.between(now, at);
        return Optional.of(wait.isNegative() ? Duration.ZERO : wait);
    }

    /** The instant of an HTTP-date in any of its three forms, or null. */
    static Instant httpDate(String v, Instant now) {
        try {
            return ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
        } catch (DateTimeException e) {
            // not IMF-fixdate
        }
        java.util.regex.Matcher m = RFC_850_DAY.matcher(v);
        if (m.matches()) {
            try {
                LocalDateTime t = LocalDateTime.parse(m.group(2), RFC_850);
                // RFC 9110 5.6.7: a two-digit year more than 50 years in the future is in the past century.
                LocalDateTime limit = LocalDateTime.ofInstant(now, ZoneOffset.UTC).plusYears(50);
                while (t.isAfter(limit)) {
                    t = t.minusYears(100);
                }
                while (!t.plusYears(100).isAfter(limit)) {
                    t = t.plusYears(100);
                }
                if (t.getDayOfWeek().getDisplayName(java.time.format.TextStyle.FULL, Locale.ENGLISH).equals(m.group(1))) {
                    return t.toInstant(ZoneOffset.UTC);
                }
                return null;
            } catch (DateTimeException e) {
                return null;
            }
        }
        try {
            return LocalDateTime.parse(v, ASCTIME).toInstant(ZoneOffset.UTC);
        } catch (DateTimeException e) {
            return null;
        }
    }

    /** {@code at} as an IMF-fixdate, the form a server sends (for tests and the mock provider). */
    public static String format(Instant at) {
        return DateTimeFormatter.RFC_1123_DATE_TIME.format(at.atZone(ZoneOffset.UTC));
    }
}
