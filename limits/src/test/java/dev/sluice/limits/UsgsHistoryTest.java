package dev.sluice.limits;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The known figures of the USGS M≥5 catalogue 2015-2025 (data/usgs/README.md). */
class UsgsHistoryTest {

    private static final Path CATALOGUE = Path.of("../data/usgs/m5_2015-2025_complete_segments.csv");
    private static final long HOUR = 3_600_000L;

    @Test
    void atFivePerHourTheSmallestLosslessBurstIs74AndTheWorstStretchStartsWithKamchatka() throws IOException {
        List<String> lines = Files.readAllLines(CATALOGUE, StandardCharsets.UTF_8);
        long[] instants = instants(lines);
        assertThat(instants).hasSize(17_126);

        CapacityPlan plan = CapacityPlanner.minLosslessBurst(instants, Rate.parse("5/h"));

        assertThat(plan.minLosslessBurst()).isEqualTo(74);
        assertThat(Instant.ofEpochMilli(plan.worstStartMillis())).isEqualTo(Instant.parse("2025-07-29T23:24:52.483Z"));
        assertThat(lines.get(plan.worstStartIndex() + 1)).contains("us6000qw60").contains("Kamchatka");
        // 105 events in the 6.2 hours after the main shock.
        assertThat(plan.worstEvents()).isEqualTo(105);
        assertThat(plan.worstEndMillis() - plan.worstStartMillis()).isBetween(6 * HOUR, 6 * HOUR + 15 * 60_000L);

        assertThat(Evaluator.evaluate(instants, new TokenBucket(Rate.perHour(5), 74), HOUR).refused()).isZero();
        assertThat(Evaluator.evaluate(instants, new Gcra(Rate.perHour(5), 73), HOUR).refused()).isPositive();
        // The densest 60 minutes hold 38 events.
        assertThat(Evaluator.busiestWindow(instants, null, HOUR)[0]).isEqualTo(38);
    }

    private static long[] instants(List<String> lines) {
        assertThat(lines.get(0)).startsWith("time_utc_iso,");
        // The first column is an unquoted ISO instant; later columns may be quoted and are not needed here.
        return lines.stream().skip(1).filter(l -> !l.isBlank())
                .mapToLong(l -> Instant.parse(l.substring(0, l.indexOf(','))).toEpochMilli())
                .toArray();
    }
}
