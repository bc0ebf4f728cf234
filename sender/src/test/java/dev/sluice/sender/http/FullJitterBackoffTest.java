package dev.sluice.sender.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

class FullJitterBackoffTest {
    private final FullJitterBackoff backoff = new FullJitterBackoff(Duration.ofMillis(100), Duration.ofSeconds(5));

    @Test
    void ceiling_doubles_from_base_and_stops_at_the_cap() {
        assertThat(backoff.ceilingMs(1)).isEqualTo(100);
        assertThat(backoff.ceilingMs(2)).isEqualTo(200);
        assertThat(backoff.ceilingMs(3)).isEqualTo(400);
        assertThat(backoff.ceilingMs(6)).isEqualTo(3_200);
        assertThat(backoff.ceilingMs(7)).isEqualTo(5_000);
        assertThat(backoff.ceilingMs(64)).as("no overflow").isEqualTo(5_000);
        assertThat(backoff.ceilingMs(Integer.MAX_VALUE)).isEqualTo(5_000);
    }

    @Test
    void every_wait_is_within_one_ms_and_the_ceiling_and_spreads_over_it() {
        RandomGenerator random = new SplittableRandom(42);
        for (int attempt = 1; attempt <= 10; attempt++) {
            long ceiling = backoff.ceilingMs(attempt);
            long min = Long.MAX_VALUE;
            long max = 0;
            for (int i = 0; i < 2_000; i++) {
                long ms = backoff.delay(attempt, random).toMillis();
                assertThat(ms).isBetween(1L, ceiling);
                min = Math.min(min, ms);
                max = Math.max(max, ms);
            }
            // full jitter: the draws cover the whole range, not a band near the ceiling
            assertThat(min).as("attempt %d", attempt).isLessThan(ceiling / 10 + 2);
            assertThat(max).as("attempt %d", attempt).isGreaterThan(ceiling * 9 / 10);
        }
    }

    @Test
    void invalid_bounds_are_refused() {
        assertThatThrownBy(() -> new FullJitterBackoff(Duration.ZERO, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new FullJitterBackoff(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .hasMessageContaining("below base");
        assertThatThrownBy(() -> backoff.ceilingMs(0)).hasMessageContaining("1-based");
    }
}
