package dev.sluice.topology;

import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Lane;
import dev.sluice.avro.NotificationClass;
import dev.sluice.metrics.TopologyMetrics;

/**
 * Records the topology's decisions as Micrometer meters through {@link TopologyMetrics} (names in
 * {@link dev.sluice.metrics.SluiceMetrics}). Counts are at-least-once under exactly-once processing (a
 * retried task counts again); the exact figures are on the topics.
 */
public final class MicrometerTopologyCounters implements TopologyCounters {
    private final TopologyMetrics metrics;

    public MicrometerTopologyCounters(TopologyMetrics metrics) {
        this.metrics = metrics;
    }

    @Override
    public void sentOn(Lane lane, NotificationClass eventClass) {
        metrics.outbound(lane, eventClass);
    }

    @Override
    public void folded(Lane lane, NotificationClass eventClass, FoldReason reason) {
        metrics.folded(eventClass);
    }

    @Override
    public void digestEmitted(Lane lane, int foldedCount, DigestTrigger trigger) {
        metrics.digestEmitted(trigger.tag());
    }

    @Override
    public void result(Lane lane, NotificationClass eventClass, DeliveryStatus status) {
        if (status == DeliveryStatus.EXPIRED) {
            metrics.expired(eventClass);
        } else if (status == DeliveryStatus.SKIPPED_INACTIVE) {
            metrics.skipped("inactive");
        }
    }

    @Override
    public void streamThreadFailed(boolean replaced) {
        metrics.streamThreadFailed(replaced);
    }

    @Override
    public void duplicate(Lane lane) {
        metrics.duplicate(lane);
    }

    @Override
    public void deadLettered(Lane lane) {
        metrics.deadLettered("invalid_record");
    }
}
