package dev.sluice.topology;

import dev.sluice.avro.ChatEvent;
import dev.sluice.avro.ChatStatus;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DigestEntry;
import dev.sluice.avro.Notification;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.avro.Preference;
import dev.sluice.avro.SenderStatus;
import dev.sluice.schemas.SchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroDeserializer;
import dev.sluice.schemas.SpecificAvroSerde;
import java.time.Duration;
import org.apache.avro.specific.SpecificRecord;
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
import org.apache.kafka.streams.state.Stores;

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
 *   <li>{@code <p>-checked} with branches {@code <p>-checked-valid} / {@code <p>-checked-invalid}: invalid
 *       records go through {@code <p>-dlq-original} to {@code <p>-dlq-sink} ({@code notifications.dlq},
 *       original key, value and headers plus {@link DeadLetterHeaders}), and, when the notification id could be
 *       read, through {@code <p>-dlq-has-result} and {@code <p>-dlq-result} to {@code <p>-dlq-results-sink}
 *       (a FAILED result on {@code delivery.results} carrying the reason);</li>
 *   <li>{@code <p>-by-chat-path} with branches {@code <p>-by-chat-path-direct} → {@code <p>-direct-key} (a record
 *       the producer keyed by its normalised chat id in that key's partition, {@link ChatKeyedInput}) and
 *       {@code <p>-by-chat-path-repartition} → {@code <p>-key-by-chat} → the repartition {@code by-chat} (live) /
 *       {@code backfill-by-chat} (topic {@code <application.id>-by-chat-repartition}) for any other; both meet in
 *       {@code <p>-by-chat-merge}: from here per-chat order is partition order;</li>
 *   <li>{@code <p>-route} ({@link RouteProcessor}): chat status, deadlines, schedules, classification,
 *       folding, with the stores {@code chat-status-store}, {@code chat-policy-store}, {@code <p>-digest-store},
 *       {@code <p>-schedule-store}, {@code <p>-dedupe-store} (a window store) (changelogs {@code <application.id>-<store>-changelog}) and the global
 *       stores {@code sender-status-store} and {@code preferences-store};</li>
 *   <li>{@code <p>-routed} with branches {@code <p>-routed-outbound} → {@code <p>-to-outbound} →
 *       {@code <p>-outbox-sink} (the lane's outbox) and {@code <p>-routed-result} → {@code <p>-to-result} →
 *       {@code <p>-results-sink} ({@code delivery.results}: EXPIRED and SKIPPED_INACTIVE, sender_instance
 *       {@code topology}).</li>
 * </ol>
 * Between {@code <p>-to-outbound} and {@code <p>-outbox-sink}: {@code <p>-address} ({@link EditAddressProcessor}, stores
 * {@code provider-message-id-store} and {@code <p>-edit-wait-store}) with branches {@code <p>-addressed-outbound} →
 * {@code <p>-to-addressed} and {@code <p>-addressed-result} → {@code <p>-to-address-result} → {@code <p>-address-results-sink}
 * (an edit or delete whose message cannot be found ends FAILED); {@code delivery-results-source} →
 * {@code delivery-results-to-message-ids} ({@link ProviderMessageIdsProcessor}) keeps {@code provider-message-id-store}.
 * Between {@code <p>-to-addressed} and {@code <p>-outbox-sink}: {@code <p>-split-parts} ({@link Outbound#parts}) sends a
 * text too long for one message ({@code text.too.long=split}) as its ordered parts {@code <id>#k/n}, keyed by the chat
 * like the rest, so they keep per-chat order; any other message passes unchanged.
 *
 * <p>Parts: {@code delivery-parts-source} ({@code delivery.parts}, where senders write the results of parts) →
 * {@code delivery-parts-aggregate} ({@link PartResultsProcessor}, store {@code part-results-store}) →
 * {@code delivery-parts-results-sink}: exactly one result per split notification on {@code delivery.results}.
 *
 * <p>Shared: {@code chat-events-source} → {@code chat-events-to-status} and {@code delivery-results-source} →
 * {@code delivery-results-to-status} keep {@code chat-status-store} ({@link ChatStatusProcessor}); global
 * stores {@code sender-status-store} (source {@code sender-status-source}, updater {@code sender-status}) and {@code preferences-store}
 * (source {@code preferences-source}, updater {@code preferences}) copy the compacted topics.
 *
 * <p><b>Partitions:</b> {@code chat.events} and {@code delivery.results} are read in the same task as the
 * {@code by-chat} repartition (they share {@code chat-status-store}), so they must have the same number of
 * partitions as {@code notifications} (whose count the repartition inherits) and be keyed by chat id.
 * {@link TopicBootstrap} creates them so.
 *
 * <p><b>Accounting</b> (every input id has exactly one terminal fate; an id repeated within
 * {@code dedupe.window.ms} is dropped as a duplicate, counted, and has the fate of its first copy): an id is in
 * exactly one of: the DLQ (plus a FAILED result when its id could be read);
 * an outbox record with {@code digest_count = 0} (its own {@code id}), or, split ({@code text.too.long=split}), the n
 * outbox records {@code <id>#k/n} whose {@code part.parent_id} is the id (their results on {@code delivery.parts} fold
 * into one result for the id); the {@code folded_ids} of exactly one
 * outbox record with {@code digest_count > 0} (a digest, id {@code <lane>-digest-<partition>-<offset>-<ms>}; its
 * delivery result carries the same {@code folded_ids}); a {@code delivery.results} record with
 * {@code sender_instance = topology}: EXPIRED or SKIPPED_INACTIVE for one notification (its id is the
 * {@code message_id}), or SKIPPED_INACTIVE for a digest whose chat became inactive while it was pending (its
 * {@code folded_ids}, {@code digest_count > 0}). Counting: folded = Σ digest_count of
 * outbox digests, digests = number of outbox records with digest_count > 0.
 */
public final class SluiceTopology {
    public static final String CHAT_STATUS_STORE = "chat-status-store";
    public static final String CHAT_POLICY_STORE = "chat-policy-store";
    public static final String SENDER_STATUS_STORE = "sender-status-store";
    public static final String PREFERENCES_STORE = "preferences-store";
    /** Notification id to provider message id, from {@code delivery.results}, for edits and deletes (issue 20). */
    public static final String PROVIDER_MESSAGE_ID_STORE = "provider-message-id-store";
    /** Results of the parts of split notifications until each notification has its one result ({@link PartResultsProcessor}). */
    public static final String PART_RESULTS_STORE = "part-results-store";

    private SluiceTopology() {
    }

    /** {@code <p>-digest-store}. */
    public static String digestStore(LaneSpec spec) {
        return spec.name("digest-store");
    }

    /** {@code <p>-dedupe-store}: window store of the ids seen within {@code dedupe.window.ms}. */
    public static String dedupeStore(LaneSpec spec) {
        return spec.name("dedupe-store");
    }

    /** {@code <p>-edit-wait-store}: edits waiting for their original's result, and the chat's messages behind them. */
    public static String editWaitStore(LaneSpec spec) {
        return spec.name("edit-wait-store");
    }

    /** {@code <p>-schedule-store}. */
    public static String scheduleStore(LaneSpec spec) {
        return spec.name("schedule-store");
    }

    /** Builds the topology; the registry client is used by the serdes when records flow, not here. */
    public static Topology build(TopologyConfig config, SchemaRegistryClient registry) {
        return build(config, registry, TopologyCounters.NONE);
    }

    /** As {@link #build(TopologyConfig, SchemaRegistryClient)}, reporting decisions to {@code counters}. */
    public static Topology build(TopologyConfig config, SchemaRegistryClient registry, TopologyCounters counters) {
        return build(config, registry, counters, ChatKeyedInput.unknown());
    }

    /**
     * As {@link #build(TopologyConfig, SchemaRegistryClient, TopologyCounters)}; {@code keyedInput} tells which valid
     * records may skip the {@code by-chat} repartition (see {@link #byChat}).
     */
    public static Topology build(TopologyConfig config, SchemaRegistryClient registry, TopologyCounters counters,
                                 ChatKeyedInput keyedInput) {
        StreamsBuilder builder = new StreamsBuilder();
        var topics = config.topics();
        // One per built topology: the sender-status updater (global thread) tells the routing processors what changed.
        StoreChanges senderStatusChanges = new StoreChanges();
        builder.addGlobalStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(SENDER_STATUS_STORE),
                        Serdes.String(), Serdes.ByteArray()).withLoggingDisabled(), topics.senderStatus(),
                Consumed.with(Serdes.String(), Serdes.ByteArray()).withName("sender-status"),
                () -> new RawGlobalStoreUpdater(SENDER_STATUS_STORE, senderStatusChanges));
        builder.addGlobalStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(PREFERENCES_STORE),
                        Serdes.String(), Serdes.ByteArray()).withLoggingDisabled(), topics.preferences(),
                Consumed.with(Serdes.String(), Serdes.ByteArray()).withName("preferences"),
                () -> new RawGlobalStoreUpdater(PREFERENCES_STORE));

        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(CHAT_STATUS_STORE),
                Serdes.String(), new SpecificAvroSerde<>(registry, ChatStatus.class)));
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(CHAT_POLICY_STORE),
                Serdes.String(), Serdes.String()));
        builder.stream(topics.chatEvents(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName("chat-events-source"))
                .process(() -> ChatStatusProcessor.fromChatEvents(new SpecificAvroDeserializer<>(registry, ChatEvent.class)),
                        Named.as("chat-events-to-status"), CHAT_STATUS_STORE);
        builder.addStateStore(Stores.windowStoreBuilder(Stores.persistentWindowStore(PROVIDER_MESSAGE_ID_STORE,
                Duration.ofMillis(config.editTargetRetentionMs()), Duration.ofMillis(1), false), Serdes.String(), Serdes.String()));
        KStream<byte[], byte[]> deliveryResults = builder.stream(topics.deliveryResults(),
                Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName("delivery-results-source"));
        deliveryResults.process(() -> ChatStatusProcessor.fromDeliveryResults(new SpecificAvroDeserializer<>(registry, DeliveryResult.class)),
                        Named.as("delivery-results-to-status"), CHAT_STATUS_STORE);
        deliveryResults.process(() -> new ProviderMessageIdsProcessor(new SpecificAvroDeserializer<>(registry, DeliveryResult.class)),
                Named.as("delivery-results-to-message-ids"), PROVIDER_MESSAGE_ID_STORE);

        // text.too.long=split: the parts' results (delivery.parts) become each notification's one result
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(PART_RESULTS_STORE),
                Serdes.String(), new SpecificAvroSerde<>(registry, DeliveryResult.class)));
        builder.stream(topics.deliveryParts(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName("delivery-parts-source"))
                .process(() -> new PartResultsProcessor(new SpecificAvroDeserializer<>(registry, DeliveryResult.class)),
                        Named.as("delivery-parts-aggregate"), PART_RESULTS_STORE)
                .to(topics.deliveryResults(), Produced.with(Serdes.String(), new SpecificAvroSerde<>(registry, DeliveryResult.class))
                        .withName("delivery-parts-results-sink"));

        SpecificAvroSerde<Notification> notificationSerde = new SpecificAvroSerde<>(registry, Notification.class);
        addLane(builder, LaneSpec.live(topics), config, registry, counters, notificationSerde, keyedInput, senderStatusChanges);
        addLane(builder, LaneSpec.backfill(topics), config, registry, counters, notificationSerde, keyedInput, senderStatusChanges);
        return builder.build();
    }

    private static void addLane(StreamsBuilder builder, LaneSpec spec, TopologyConfig config, SchemaRegistryClient registry,
                                TopologyCounters counters, SpecificAvroSerde<Notification> notificationSerde, ChatKeyedInput keyedInput,
                                StoreChanges senderStatusChanges) {
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(digestStore(spec)),
                Serdes.String(), new SpecificAvroSerde<>(registry, DigestEntry.class)));
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(scheduleStore(spec)),
                Serdes.Bytes(), new SpecificAvroSerde<>(registry, Notification.class)));
        // Bounded by its retention: ids older than dedupe.window.ms leave with their segment (and the changelog's).
        Duration dedupeWindow = Duration.ofMillis(config.dedupeWindowMs());
        builder.addStateStore(Stores.windowStoreBuilder(Stores.persistentWindowStore(dedupeStore(spec), dedupeWindow,
                Duration.ofMillis(1), false), Serdes.String(), Serdes.Long()));
        SpecificAvroSerde<OutboundMessage> outboundSerde = new SpecificAvroSerde<>(registry, OutboundMessage.class);
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(editWaitStore(spec)),
                Serdes.String(), outboundSerde));
        SpecificAvroSerde<DeliveryResult> resultSerde = new SpecificAvroSerde<>(registry, DeliveryResult.class);

        KStream<byte[], Checked> checked = builder
                .stream(spec.sourceTopic(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName(spec.name("source")))
                .process(() -> new ValidateProcessor(notificationSerde.deserializer(), spec, config.scheduleMaxHorizonMs(), keyedInput,
                                config.textTooLong() == TopologyConfig.TextTooLong.SPLIT ? config.textSplitMaxParts() : 1),
                        Named.as(spec.name("validate")));

        checked.split(Named.as(spec.name("checked")))
                .branch((key, value) -> value.isValid(), Branched.withConsumer(valid -> route(byChat(valid, spec, notificationSerde),
                        spec, config, registry, counters, outboundSerde, resultSerde, senderStatusChanges), "-valid"))
                .defaultBranch(Branched.withConsumer(invalid -> {
                    invalid.mapValues(c -> {
                                counters.deadLettered(spec.lane());
                                return c.originalValue();
                            }, Named.as(spec.name("dlq-original")))
                            .to(spec.dlqTopic(), Produced.with(Serdes.ByteArray(), Serdes.ByteArray()).withName(spec.name("dlq-sink")));
                    // A dead letter whose id could be read also ends with a FAILED result carrying the reason.
                    invalid.filter((key, c) -> c.deadLetterResult() != null, Named.as(spec.name("dlq-has-result")))
                            .map((key, c) -> {
                                DeliveryResult r = c.deadLetterResult();
                                counters.result(spec.lane(), r.getEventClass(), r.getStatus());
                                return KeyValue.pair(r.getChatId(), r);
                            }, Named.as(spec.name("dlq-result")))
                            .to(config.topics().deliveryResults(), Produced.with(Serdes.String(), resultSerde)
                                    .withName(spec.name("dlq-results-sink")));
                }, "-invalid"));
    }

    /**
     * The lane's valid notifications keyed by chat id, in their chat's partition: a record the producer keyed by its
     * normalised chat id in that key's partition ({@link ChatKeyedInput}) goes straight on ({@code <p>-by-chat-path-direct},
     * {@code <p>-direct-key}); any other takes the {@code by-chat} repartition ({@code <p>-by-chat-path-repartition},
     * {@code <p>-key-by-chat}); both meet in {@code <p>-by-chat-merge}. Each path keeps its own order; a chat whose
     * records come both ways (one producer keying it two ways) has no order between the two paths: the repartitioned
     * records arrive one commit later.
     */
    private static KStream<String, Notification> byChat(KStream<byte[], Checked> valid, LaneSpec spec,
                                                        SpecificAvroSerde<Notification> notificationSerde) {
        var paths = valid.split(Named.as(spec.name("by-chat-path")))
                .branch((key, value) -> value.onChatPartition(), Branched.as("-direct"))
                .defaultBranch(Branched.as("-repartition"));
        KStream<String, Notification> direct = paths.get(spec.name("by-chat-path-direct"))
                .map((key, value) -> KeyValue.pair(value.notification().getChatId(), value.notification()),
                        Named.as(spec.name("direct-key")));
        KStream<String, Notification> repartitioned = paths.get(spec.name("by-chat-path-repartition"))
                .map((key, value) -> KeyValue.pair(value.notification().getChatId(), value.notification()),
                        Named.as(spec.name("key-by-chat")))
                .repartition(Repartitioned.<String, Notification>as(spec.repartitionName())
                        .withKeySerde(Serdes.String()).withValueSerde(notificationSerde));
        return direct.merge(repartitioned, Named.as(spec.name("by-chat-merge")));
    }

    private static void route(KStream<String, Notification> byChat, LaneSpec spec, TopologyConfig config,
                              SchemaRegistryClient registry, TopologyCounters counters,
                              SpecificAvroSerde<OutboundMessage> outboundSerde, SpecificAvroSerde<DeliveryResult> resultSerde,
                              StoreChanges senderStatusChanges) {
        byChat.<String, SpecificRecord>process(() -> new RouteProcessor(spec, config, config.classifier(), counters,
                                new SpecificAvroDeserializer<>(registry, SenderStatus.class), senderStatusChanges,
                                new SpecificAvroDeserializer<>(registry, Preference.class)),
                        Named.as(spec.name("route")), CHAT_STATUS_STORE, CHAT_POLICY_STORE, digestStore(spec), scheduleStore(spec),
                        dedupeStore(spec))
                .split(Named.as(spec.name("routed")))
                .branch((key, value) -> value instanceof OutboundMessage, Branched.withConsumer(out -> out
                        .mapValues(value -> (OutboundMessage) value, Named.as(spec.name("to-outbound")))
                        // edits and deletes get the provider message id of the message they name (EditAddressProcessor)
                        .<String, SpecificRecord>process(() -> new EditAddressProcessor(spec, config), Named.as(spec.name("address")),
                                PROVIDER_MESSAGE_ID_STORE, editWaitStore(spec))
                        .split(Named.as(spec.name("addressed")))
                        .branch((key, value) -> value instanceof OutboundMessage, Branched.withConsumer(addressed -> addressed
                                .mapValues(value -> (OutboundMessage) value, Named.as(spec.name("to-addressed")))
                                // a too-long text (text.too.long=split) leaves as its ordered parts, same key: per-chat order
                                .flatMapValues(Outbound::parts, Named.as(spec.name("split-parts")))
                                .to(spec.outboxTopic(), Produced.with(Serdes.String(), outboundSerde).withName(spec.name("outbox-sink"))),
                                "-outbound"))
                        .defaultBranch(Branched.withConsumer(unaddressable -> unaddressable
                                .mapValues(value -> (DeliveryResult) value, Named.as(spec.name("to-address-result")))
                                .to(config.topics().deliveryResults(), Produced.with(Serdes.String(), resultSerde)
                                        .withName(spec.name("address-results-sink"))), "-result")),
                        "-outbound"))
                .defaultBranch(Branched.withConsumer(results -> results
                        .mapValues(value -> (DeliveryResult) value, Named.as(spec.name("to-result")))
                        .to(config.topics().deliveryResults(), Produced.with(Serdes.String(), resultSerde)
                                .withName(spec.name("results-sink"))),
                        "-result"));
    }
}
