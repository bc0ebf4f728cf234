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
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
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
 * <p>Per lane, with stable kebab-case node names ({@code <p>} = {@code live} or {@code backfill}); since issue 21 session 9
 * a valid notification keyed by its chat passes 4 nodes ({@code <p>-source}, {@code <p>-validate}, {@code <p>-route},
 * {@code <p>-outbox-sink}) instead of 18: each step forwards to the one named child a record goes to,
 * with no split, branch, map or mapValues node in between (each node hop costs Kafka Streams a forward, a record context and
 * its sensors):
 * <ol>
 *   <li>{@code <p>-source}: the source topic as raw bytes, so no record can fail before we see it;</li>
 *   <li>{@code <p>-validate} ({@link ValidateProcessor}): read as Notification (Confluent wire format) and validate
 *       ({@link NotificationValidator}); an invalid record goes to {@code <p>-dlq-sink} ({@code notifications.dlq},
 *       original key, value and headers plus {@link DeadLetterHeaders}), and, when the notification id could be read, a
 *       FAILED result carrying the reason to {@code <p>-dlq-results-sink} ({@code delivery.results}); a valid one, keyed by
 *       its normalised chat id, goes straight to {@code <p>-route} when the producer keyed it by that chat id in
 *       that key's partition ({@link ChatKeyedInput}), else through the repartition {@code by-chat} (live) /
 *       {@code backfill-by-chat} (nodes {@code <r>-repartition-filter}, {@code -sink}, {@code -source}; topic
 *       {@code <application.id>-<r>-repartition}) to {@code <p>-route}: from here per-chat order is partition
 *       order. Each path keeps its own order; a chat whose records come both ways (one producer keying it two ways) has
 *       no order between the two paths: the repartitioned records arrive one commit later;</li>
 *   <li>{@code <p>-route} ({@link RouteProcessor}): dedupe, chat status, deadlines, schedules, classification, folding,
 *       then the addressing of edits and deletes ({@link EditAddressing}) and the split of a text too long for one message
 *       ({@code text.too.long=split}, {@link Outbound#parts}: its ordered parts {@code <id>#k/n}, keyed by the chat like
 *       the rest, so they keep per-chat order), with the stores {@code chat-status-store}, {@code chat-policy-store},
 *       {@code <p>-digest-store}, {@code <p>-schedule-store}, {@code <p>-dedupe-batches} and {@code <p>-dedupe-store} (window stores),
 *       {@code provider-message-id-store}, {@code <p>-edit-wait-store} (changelogs
 *       {@code <application.id>-<store>-changelog}) and the global stores {@code sender-status-store} and
 *       {@code preferences-store}; it forwards outbound messages to {@code <p>-outbox-sink} (the lane's outbox) and the
 *       results it decides (EXPIRED, SKIPPED_INACTIVE, an edit or delete whose message cannot be found: FAILED;
 *       sender_instance {@code topology}) to {@code <p>-results-sink} ({@code delivery.results}).</li>
 * </ol>
 * {@code delivery-results-source} → {@code delivery-results-to-message-ids} ({@link ProviderMessageIdsProcessor}) keeps
 * {@code provider-message-id-store}.
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
    /** Lane steps ({@code <p>-<step>}) that processors forward to by name. */
    static final String DLQ_SINK = "dlq-sink";
    static final String DLQ_RESULTS_SINK = "dlq-results-sink";
    static final String ROUTE = "route";
    static final String OUTBOX_SINK = "outbox-sink";
    static final String RESULTS_SINK = "results-sink";

    private SluiceTopology() {
    }

    /** {@code <p>-digest-store}. */
    public static String digestStore(LaneSpec spec) {
        return spec.name("digest-store");
    }

    /**
     * {@code <p>-dedupe-store}: window store of single ids (id → time) seen within {@code dedupe.window.ms}; read at init
     * (ids the previous version wrote), written only when a task's ids outgrow the in-memory filter ({@link SeenIds}).
     */
    public static String dedupeStore(LaneSpec spec) {
        return spec.name("dedupe-store");
    }

    /**
     * {@code <p>-dedupe-batches}: window store of the ids seen within {@code dedupe.window.ms} in batches (key = a task-local
     * sequence, value = the ids, {@link SeenIds#decode}), record cache on: one record per batch and commit.
     */
    public static String dedupeBatchStore(LaneSpec spec) {
        return spec.name("dedupe-batches");
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
        // One per built topology: per task, the chats with an entry in chat-status-store (its writers tell, the routes read).
        ChatStatusKeys chatStatusKeys = new ChatStatusKeys();
        // One per built topology: the users with an entry in preferences-store (the global thread tells, the routes read).
        PreferenceKeys preferenceKeys = new PreferenceKeys();
        builder.addGlobalStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(SENDER_STATUS_STORE),
                        Serdes.String(), Serdes.ByteArray()).withLoggingDisabled(), topics.senderStatus(),
                Consumed.with(Serdes.String(), Serdes.ByteArray()).withName("sender-status"),
                () -> new RawGlobalStoreUpdater(SENDER_STATUS_STORE, senderStatusChanges));
        builder.addGlobalStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(PREFERENCES_STORE),
                        Serdes.String(), Serdes.ByteArray()).withLoggingDisabled(), topics.preferences(),
                Consumed.with(Serdes.String(), Serdes.ByteArray()).withName("preferences"),
                () -> new RawGlobalStoreUpdater(PREFERENCES_STORE, new StoreChanges(), preferenceKeys::written));

        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(CHAT_STATUS_STORE),
                Serdes.String(), new SpecificAvroSerde<>(registry, ChatStatus.class)));
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(CHAT_POLICY_STORE),
                Serdes.String(), Serdes.String()));
        builder.stream(topics.chatEvents(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName("chat-events-source"))
                .process(() -> ChatStatusProcessor.fromChatEvents(new SpecificAvroDeserializer<>(registry, ChatEvent.class), chatStatusKeys),
                        Named.as("chat-events-to-status"), CHAT_STATUS_STORE);
        builder.addStateStore(Stores.windowStoreBuilder(Stores.persistentWindowStore(PROVIDER_MESSAGE_ID_STORE,
                Duration.ofMillis(config.editTargetRetentionMs()), Duration.ofMillis(1), false), Serdes.String(), Serdes.String()));
        KStream<byte[], byte[]> deliveryResults = builder.stream(topics.deliveryResults(),
                Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName("delivery-results-source"));
        deliveryResults.process(() -> ChatStatusProcessor.fromDeliveryResults(new SpecificAvroDeserializer<>(registry, DeliveryResult.class), chatStatusKeys),
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
        List<Consumer<Topology>> routes = new ArrayList<>();
        for (LaneSpec spec : List.of(LaneSpec.live(topics), LaneSpec.backfill(topics))) {
            routes.add(addLane(builder, spec, config, registry, counters, notificationSerde, keyedInput, senderStatusChanges,
                    chatStatusKeys, preferenceKeys));
        }
        Topology topology = builder.build();
        routes.forEach(route -> route.accept(topology));
        return topology;
    }

    /** The lane's DSL part; returns what adds its {@code <p>-route} and sinks to the built topology. */
    private static Consumer<Topology> addLane(StreamsBuilder builder, LaneSpec spec, TopologyConfig config, SchemaRegistryClient registry,
                                TopologyCounters counters, SpecificAvroSerde<Notification> notificationSerde, ChatKeyedInput keyedInput,
                                StoreChanges senderStatusChanges, ChatStatusKeys chatStatusKeys, PreferenceKeys preferenceKeys) {
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(digestStore(spec)),
                Serdes.String(), new SpecificAvroSerde<>(registry, DigestEntry.class)));
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(scheduleStore(spec)),
                Serdes.Bytes(), new SpecificAvroSerde<>(registry, Notification.class)));
        // Bounded by their retention: ids older than dedupe.window.ms leave with their segment (and the changelog's). The
        // batches' store keeps a batch for the window plus the time it takes ids, and caches it (its value grows per id,
        // its changelog gets it once per commit).
        Duration dedupeWindow = Duration.ofMillis(config.dedupeWindowMs());
        builder.addStateStore(Stores.windowStoreBuilder(Stores.persistentWindowStore(dedupeStore(spec), dedupeWindow,
                Duration.ofMillis(1), false), Serdes.String(), Serdes.Long()));
        builder.addStateStore(Stores.windowStoreBuilder(Stores.persistentWindowStore(dedupeBatchStore(spec),
                dedupeWindow.plusMillis(SeenIds.BATCH_SPAN_MS), Duration.ofMillis(1), false), Serdes.Long(), Serdes.ByteArray())
                .withCachingEnabled());
        SpecificAvroSerde<OutboundMessage> outboundSerde = new SpecificAvroSerde<>(registry, OutboundMessage.class);
        builder.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(editWaitStore(spec)),
                Serdes.String(), outboundSerde));
        SpecificAvroSerde<DeliveryResult> resultSerde = new SpecificAvroSerde<>(registry, DeliveryResult.class);

        // <p>-validate forwards each record to one of its named children (ValidateProcessor): the DLQ sinks, the by-chat
        // repartition, or <p>-route. The casts: one processor feeds children of different key and value types.
        KStream<Object, Object> validated = builder
                .stream(spec.sourceTopic(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName(spec.name("source")))
                .process(() -> new ValidateProcessor(notificationSerde.deserializer(), spec, config.scheduleMaxHorizonMs(), keyedInput,
                                config.textTooLong() == TopologyConfig.TextTooLong.SPLIT ? config.textSplitMaxParts() : 1, counters),
                        Named.as(spec.name("validate")));
        SluiceTopology.<byte[], byte[]>typed(validated)
                .to(spec.dlqTopic(), Produced.with(Serdes.ByteArray(), Serdes.ByteArray()).withName(spec.name(DLQ_SINK)));
        SluiceTopology.<String, DeliveryResult>typed(validated)
                .to(config.topics().deliveryResults(), Produced.with(Serdes.String(), resultSerde).withName(spec.name(DLQ_RESULTS_SINK)));
        SluiceTopology.<String, Notification>typed(validated).repartition(Repartitioned.<String, Notification>as(spec.repartitionName())
                .withKeySerde(Serdes.String()).withValueSerde(notificationSerde));
        // <p>-route has two parents, <p>-validate (records already in their chat's partition) and the repartition's source:
        // from here per-chat order is partition order. The DSL joins two streams only through a merge node, one more hop
        // per record, so this step is added to the built topology with the Processor API.
        return topology -> {
            String route = spec.name(ROUTE);
            topology.addProcessor(route, () -> new RouteProcessor(spec, config, config.classifier(), counters,
                            new SpecificAvroDeserializer<>(registry, SenderStatus.class), senderStatusChanges,
                            new SpecificAvroDeserializer<>(registry, Preference.class), chatStatusKeys, preferenceKeys),
                    spec.name("validate"), spec.repartitionName() + "-repartition-source");
            topology.connectProcessorAndStateStores(route, CHAT_STATUS_STORE, CHAT_POLICY_STORE, digestStore(spec),
                    scheduleStore(spec), dedupeStore(spec), dedupeBatchStore(spec), PROVIDER_MESSAGE_ID_STORE, editWaitStore(spec));
            topology.addSink(spec.name(OUTBOX_SINK), spec.outboxTopic(), new StringSerializer(), outboundSerde.serializer(), route);
            topology.addSink(spec.name(RESULTS_SINK), config.topics().deliveryResults(), new StringSerializer(),
                    resultSerde.serializer(), route);
        };
    }

    /**
     * The node of the {@code by-chat} repartition that {@code <p>-validate} forwards a record to when it must be re-keyed:
     * the DSL's {@code <repartition>-repartition-filter} in front of the repartition sink.
     */
    static String repartitionEntry(LaneSpec spec) {
        return spec.repartitionName() + "-repartition-filter";
    }

    /** A processor's output stream seen with the types of one named child it forwards to (the records carry them). */
    @SuppressWarnings("unchecked")
    private static <K, V> KStream<K, V> typed(KStream<?, ?> stream) {
        return (KStream<K, V>) stream;
    }

}
