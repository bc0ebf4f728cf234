package dev.sluice.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.avro.Lane;
import dev.sluice.avro.NotificationClass;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class TopologyMetricsTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final TopologyMetrics metrics = TopologyMetrics.bind(registry);

    @Test
    void everyTopologyMeterExistsAtBindTime() {
        Set<String> names = registry.getMeters().stream().map(m -> m.getId().getName()).collect(Collectors.toSet());
        assertThat(names).containsAll(SluiceMetrics.all().stream().filter(n -> n.startsWith("sluice.topology.")).toList());
    }

    @Test
    void countsFoldedDigestsExpiredSkippedDeadLetteredAndOutbound() {
        metrics.folded(NotificationClass.COLLAPSIBLE);
        metrics.folded(NotificationClass.COLLAPSIBLE);
        metrics.digestEmitted("interval");
        metrics.expired(NotificationClass.CRITICAL);
        metrics.skipped("inactive");
        metrics.deadLettered("missing_chat_id");
        metrics.deadLettered("schema_not_found");
        metrics.outbound(Lane.BACKFILL, NotificationClass.ROUTINE);
        assertThat(count(SluiceMetrics.TOPOLOGY_FOLDED, "class", "COLLAPSIBLE")).isEqualTo(2);
        assertThat(count(SluiceMetrics.TOPOLOGY_DIGESTS, "reason", "interval")).isEqualTo(1);
        assertThat(count(SluiceMetrics.TOPOLOGY_DIGESTS, "reason", "max_keys")).isZero();
        assertThat(count(SluiceMetrics.TOPOLOGY_EXPIRED, "class", "CRITICAL")).isEqualTo(1);
        assertThat(count(SluiceMetrics.TOPOLOGY_SKIPPED, "reason", "inactive")).isEqualTo(1);
        assertThat(count(SluiceMetrics.TOPOLOGY_DLQ, "reason", "missing_chat_id")).isEqualTo(1);
        assertThat(count(SluiceMetrics.TOPOLOGY_DLQ, "reason", "schema_not_found")).isEqualTo(1);
        assertThat(registry.get(SluiceMetrics.TOPOLOGY_OUTBOUND).tags("lane", "backfill", "class", "ROUTINE").counter().count()).isEqualTo(1);
    }

    @Test
    void countsDuplicatesPerLaneAndStreamThreadFailuresByResponse() {
        metrics.duplicate(Lane.LIVE);
        metrics.streamThreadFailed(true);
        metrics.streamThreadFailed(true);
        metrics.streamThreadFailed(false);
        assertThat(count(SluiceMetrics.TOPOLOGY_DUPLICATES, "lane", "live")).isEqualTo(1);
        assertThat(count(SluiceMetrics.TOPOLOGY_DUPLICATES, "lane", "backfill")).isZero();
        assertThat(count(SluiceMetrics.TOPOLOGY_STREAM_THREAD_FAILURES, "response", "replace_thread")).isEqualTo(2);
        assertThat(count(SluiceMetrics.TOPOLOGY_STREAM_THREAD_FAILURES, "response", "shutdown_client")).isEqualTo(1);
    }

    @Test
    void reasonsAreBoundedCodesNotMessages() {
        assertThatThrownBy(() -> metrics.deadLettered("Unknown magic byte 0x7b at offset 42"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("short code");
    }

    @Test
    void digestStoreSizeSumsTheRegisteredTasksAndForgetsClosedOnes() {
        metrics.digestStore("0_1", () -> 5);
        metrics.digestStore("0_2", () -> 7);
        metrics.digestStore("0_3", () -> {
            throw new IllegalStateException("store closed");
        });
        assertThat(registry.get(SluiceMetrics.TOPOLOGY_DIGEST_STORE_SIZE).gauge().value()).isEqualTo(12);
        metrics.removeDigestStore("0_1");
        assertThat(registry.get(SluiceMetrics.TOPOLOGY_DIGEST_STORE_SIZE).gauge().value()).isEqualTo(7);
    }

    private double count(String name, String tag, String value) {
        return registry.get(name).tag(tag, value).counter().count();
    }
}
