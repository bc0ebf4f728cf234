package dev.sluice.topology;

import dev.sluice.avro.Lane;
import dev.sluice.config.Topics;

/**
 * One lane of the topology: where it reads, where it writes, and the prefix of its node names.
 *
 * @param lane            LIVE or BACKFILL, written into every OutboundMessage
 * @param sourceTopic     notification topic read as raw bytes
 * @param outboxTopic     outbox topic the senders consume
 * @param dlqTopic        dead-letter topic for records that cannot be read or are invalid
 * @param namePrefix      kebab-case prefix of this lane's processor names ({@code live}, {@code backfill})
 * @param repartitionName name of the re-key-by-chat repartition; the topic is
 *                        {@code <application.id>-<repartitionName>-repartition}
 */
public record LaneSpec(Lane lane, String sourceTopic, String outboxTopic, String dlqTopic, String namePrefix,
                       String repartitionName) {

    /** {@code notifications} → {@code outbox.live}, repartition {@code by-chat}. */
    public static LaneSpec live(Topics topics) {
        return new LaneSpec(Lane.LIVE, topics.notifications(), topics.outboxLive(), topics.dlq(), "live", "by-chat");
    }

    /** {@code notifications.backfill} → {@code outbox.backfill}, repartition {@code backfill-by-chat}. */
    public static LaneSpec backfill(Topics topics) {
        return new LaneSpec(Lane.BACKFILL, topics.notificationsBackfill(), topics.outboxBackfill(), topics.dlq(),
                "backfill", "backfill-by-chat");
    }

    /** A node name of this lane: {@code <prefix>-<step>}. */
    public String name(String step) {
        return namePrefix + "-" + step;
    }
}
