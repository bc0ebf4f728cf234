package dev.sluice.sender.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class RetryAfterHeaderTest {
    private static final Instant NOW = Instant.parse("2026-11-29T20:10:00.400Z");

    @Test
    void delay_seconds() {
        assertThat(RetryAfterHeader.parse("10", NOW)).contains(Duration.ofSeconds(10));
        assertThat(RetryAfterHeader.parse(" 120 ", NOW)).contains(Duration.ofSeconds(120));
        assertThat(RetryAfterHeader.parse("0", NOW)).contains(Duration.ZERO);
    }

    @Test
    void http_date_in_the_preferred_imf_fixdate_form_is_measured_against_the_clock() {
        // 10 s after 20:10:00 on the wire; the clock is 400 ms into that second
        assertThat(RetryAfterHeader.parse("Sun, 29 Nov 2026 20:10:10 GMT", NOW)).contains(Duration.ofMillis(9_600));
        assertThat(RetryAfterHeader.parse("Sun, 29 Nov 2026 20:10:10 GMT", Instant.parse("2026-11-29T20:10:00Z")))
                .as("the same 10 s as delay-seconds 10").contains(Duration.ofSeconds(10));
    }

    @Test
    void http_date_in_the_obsolete_forms_a_recipient_must_accept() {
        assertThat(RetryAfterHeader.parse("Sunday, 29-Nov-26 20:10:10 GMT", Instant.parse("2026-11-29T20:10:00Z")))
                .as("RFC 850").contains(Duration.ofSeconds(10));
        assertThat(RetryAfterHeader.parse("Sun Nov 29 20:10:10 2026", Instant.parse("2026-11-29T20:10:00Z")))
                .as("asctime").contains(Duration.ofSeconds(10));
        assertThat(RetryAfterHeader.parse("Sun Nov  6 08:49:37 1994", Instant.parse("1994-11-06T08:49:30Z")))
                .as("asctime, day padded").contains(Duration.ofSeconds(7));
    }

    @Test
    void rfc_850_two_digit_years_more_than_50_years_ahead_are_in_the_past_century() {
        assertThat(RetryAfterHeader.httpDate("Sunday, 06-Nov-94 08:49:37 GMT", NOW))
                .isEqualTo(Instant.parse("1994-11-06T08:49:37Z"));
    }

    @Test
    void a_date_in_the_past_means_now() {
        assertThat(RetryAfterHeader.parse("Sun, 29 Nov 2026 20:09:00 GMT", NOW)).contains(Duration.ZERO);
        assertThat(RetryAfterHeader.parse("Sun, 06 Nov 1994 08:49:37 GMT", NOW)).contains(Duration.ZERO);
    }

    @Test
    void garbage_is_empty_so_the_caller_falls_back() {
        for (String garbage : new String[] {null, "", "  ", "-5", "1.5", "10s", "soon", "99999999999",
                "Sun, 32 Nov 2026 20:10:10 GMT", "2026-11-29T20:10:10Z", "Sun, 29 Nov 2026 20:10:10"}) {
            assertThat(RetryAfterHeader.parse(garbage, NOW)).as("'%s'", garbage).isEmpty();
        }
    }

    @Test
    void format_writes_imf_fixdate_that_parses_back() {
        Instant at = Instant.parse("2026-11-29T20:10:10Z");
        assertThat(RetryAfterHeader.format(at)).isEqualTo("Sun, 29 Nov 2026 20:10:10 GMT");
        assertThat(RetryAfterHeader.parse(RetryAfterHeader.format(at), at.minusSeconds(10)))
                .contains(Duration.ofSeconds(10));
    }
}
