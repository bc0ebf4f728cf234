package dev.sluice.topology;

import dev.sluice.avro.Notification;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.schemas.SchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;

/**
 * Pure factory of the Sluice Kafka Streams {@link Topology} (DESIGN.md, Topology). Builds, starts
 * nothing. Two lanes share the same steps: {@code notifications} → {@code outbox.live} (lane LIVE) and
 * {@code notifications.backfill} → {@code outbox.backfill} (lane BACKFILL).
 *
 * <p>Per lane, with stable kebab-case node names ({@code <p>} = {@code live} or {@code backfill}):
 * <ol>
 *   <li>{@code <p>-source}: the source topic as raw bytes, so no record can fail before we see it;</li>
 *   <li>{@code <p>-validate}: read as Notification (Confluent wire format) and validate
 *       ({@link NotificationValidator});</li>
 *   <li>{@code <p>-checked} with branches {@code <p>-checked-valid} / {@code <p>-checked-invalid}: the split; invalid records go through
 *       {@code <p>-dlq-original} (back to the original value bytes) to {@code <p>-dlq-sink}
 *       ({@code notifications.dlq}, original key, value and headers plus {@link DeadLetterHeaders});</li>
 *   <li>{@code <p>-key-by-chat} then the repartition {@code by-chat} (live) / {@code backfill-by-chat}
 *       (topic {@code <application.id>-by-chat-repartition}): from here per-chat order is partition order.
 *       Order before the re-key is source-partition order, so a producer that needs per-chat order sends
 *       a chat's notifications with one key (the chat id, or e.g. the user id) so they share a partition;</li>
 *   <li>{@code <p>-to-outbound}: OutboundMessage with the lane, the resolved class and {@code due_at} = now;</li>
 *   <li>{@code <p>-outbox-sink}: the outbox topic, keyed by chat id.</li>
 * </ol>
 * Issue 5's steps (chat status, deadlines, classification by kind, digests) slot in between the
 * repartition and {@code <p>-to-outbound}, each as a named processor with named stores.
 */
public final class SluiceTopology {

    private SluiceTopology() {
    }

    /** Builds the topology; the registry client is used by the serdes when records flow, not here. */
    public static Topology build(TopologyConfig config, SchemaRegistryClient registry) {
        return build(config, registry, Classifier.eventClassOrRoutine());
    }

    static Topology build(TopologyConfig config, SchemaRegistryClient registry, Classifier classifier) {
        StreamsBuilder builder = new StreamsBuilder();
        SpecificAvroSerde<Notification> notificationSerde = new SpecificAvroSerde<>(registry, Notification.class);
        SpecificAvroSerde<OutboundMessage> outboundSerde = new SpecificAvroSerde<>(registry, OutboundMessage.class);
        addLane(builder, LaneSpec.live(config.topics()), notificationSerde, outboundSerde, classifier);
        addLane(builder, LaneSpec.backfill(config.topics()), notificationSerde, outboundSerde, classifier);
        return builder.build();
    }

    private static void addLane(StreamsBuilder builder, LaneSpec spec, SpecificAvroSerde<Notification> notificationSerde,
                                SpecificAvroSerde<OutboundMessage> outboundSerde, Classifier classifier) {
        KStream<byte[], Checked> checked = builder
                .stream(spec.sourceTopic(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName(spec.name("source")))
                .process(() -> new ValidateProcessor(notificationSerde.deserializer()), Named.as(spec.name("validate")));

        checked.split(Named.as(spec.name("checked")))
                .branch((key, value) -> value.isValid(), Branched.withConsumer(valid -> valid
                        .map((key, value) -> KeyValue.pair(value.notification().getChatId(), value.notification()),
                                Named.as(spec.name("key-by-chat")))
                        .repartition(Repartitioned.<String, Notification>as(spec.repartitionName())
                                .withKeySerde(Serdes.String()).withValueSerde(notificationSerde))
                        .processValues(() -> new ToOutboundProcessor(spec.lane(), classifier), Named.as(spec.name("to-outbound")))
                        .to(spec.outboxTopic(), Produced.with(Serdes.String(), outboundSerde).withName(spec.name("outbox-sink"))),
                        "-valid"))
                .defaultBranch(Branched.withConsumer(invalid -> invalid
                        .mapValues(Checked::originalValue, Named.as(spec.name("dlq-original")))
                        .to(spec.dlqTopic(), Produced.with(Serdes.ByteArray(), Serdes.ByteArray()).withName(spec.name("dlq-sink"))),
                        "-invalid"));
    }
}
