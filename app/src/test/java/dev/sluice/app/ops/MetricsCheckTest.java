package dev.sluice.app.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.metrics.BudgetState;
import dev.sluice.metrics.SenderMetrics;
import dev.sluice.metrics.TopologyMetrics;
import java.util.List;
import org.junit.jupiter.api.Test;

class MetricsCheckTest {

    @Test
    void aBoundProcessShowsEverySluiceMetricAndAnEmptyOneShowsNone() {
        try (ProcessMetrics sender = ProcessMetrics.create("sender"); ProcessMetrics topology = ProcessMetrics.create("topology")) {
            assertThat(MetricsCheck.missing(sender.registry().scrape(), "sluice.sender.")).isNotEmpty();
            SenderMetrics.bind(sender.registry(), List.of("quakes"), BudgetState.SHARED);
            TopologyMetrics.bind(topology.registry());
            List<String> senderMissing = MetricsCheck.missing(sender.registry().scrape(), "sluice.");
            assertThat(senderMissing).allMatch(m -> m.startsWith("sluice.topology."));
            assertThat(MetricsCheck.missing(topology.registry().scrape(), "sluice.topology.")).isEmpty();
        }
    }
}
