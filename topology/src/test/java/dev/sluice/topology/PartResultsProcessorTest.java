package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Lane;
import dev.sluice.avro.MessagePart;
import dev.sluice.avro.NotificationClass;
import dev.sluice.schemas.InMemorySchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroDeserializer;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.schemas.SpecificAvroSerializer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PartResultsProcessor} keeps everything it knows in {@code part-results-store}: a processor that "restarts"
 * (a new instance on the same persistent RocksDB store, as after a crash with the store restored from its changelog)
 * completes a notification whose first parts' results the previous instance saw, writes exactly one result, and
 * stays silent for copies after it. The 7-day purge runs on a wall-clock punctuator.
 */
class PartResultsProcessorTest {
    private static final Instant TEN = Instant.parse("2026-03-02T10:00:00Z");
    private static final Instant DUE = TEN.minusSeconds(5);

    @TempDir
    Path stateDir;
    private final InMemorySchemaRegistryClient registry = new InMemorySchemaRegistryClient();
    private final SpecificAvroSerializer<DeliveryResult> serializer = new SpecificAvroSerializer<>(registry);
    private final List<KeyValueStore<String, DeliveryResult>> opened = new ArrayList<>();
    private MockProcessorContext<String, DeliveryResult> context;
    private PartResultsProcessor processor;
    private KeyValueStore<String, DeliveryResult> store;

    @AfterEach
    void closeStores() {
        opened.stream().filter(KeyValueStore::isOpen).forEach(KeyValueStore::close);
    }

    /** A fresh processor and context on the persistent store in {@code stateDir} (what survives a restart). */
    private void start() {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "sluice-topology");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        context = new MockProcessorContext<>(props, new TaskId(0, 0), stateDir.toFile());
        store = Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(SluiceTopology.PART_RESULTS_STORE), Serdes.String(),
                new SpecificAvroSerde<>(registry, DeliveryResult.class)).withLoggingDisabled().build();
        store.init(context.getStateStoreContext(), store);
        context.addStateStore(store);
        opened.add(store);
        context.setRecordMetadata("delivery.parts", 0, 0);
        processor = new PartResultsProcessor(new SpecificAvroDeserializer<>(registry, DeliveryResult.class));
        processor.init(context);
        context.setCurrentSystemTimeMs(TEN.toEpochMilli());
    }

    private void crash() {
        store.close(); // the processor and its context are dropped; only the store's files remain
    }

    private void partResult(int index, int count, DeliveryStatus status, Long providerMessageId) {
        partResult("42", DUE, index, count, status, providerMessageId);
    }

    private void partResult(String chat, Instant due, int index, int count, DeliveryStatus status, Long providerMessageId) {
        DeliveryResult r = part(chat, due, index, count, status, providerMessageId);
        processor.process(new Record<>(chat.getBytes(StandardCharsets.UTF_8), serializer.serialize("delivery.parts", r),
                TEN.toEpochMilli()));
    }

    private static DeliveryResult part(String chat, Instant due, int index, int count, DeliveryStatus status,
                                       Long providerMessageId) {
        return DeliveryResult.newBuilder().setMessageId("n-1#" + index + "/" + count).setBotId("alerts")
                .setChatId(chat).setStatus(status).setEventClass(NotificationClass.CRITICAL).setLane(Lane.LIVE)
                .setReason(status == DeliveryStatus.DELIVERED ? null : "Bad Request: can't parse entities")
                .setErrorCode(status == DeliveryStatus.DELIVERED ? null : 400).setProviderMessageId(providerMessageId)
                .setAttempts(1).setDueAt(due).setSentAt(TEN).setResultAt(TEN).setSenderInstance("sender-" + index)
                .setPart(MessagePart.newBuilder().setIndex(index).setCount(count).setParentId("n-1").build()).build();
    }

    private List<DeliveryResult> forwarded() {
        List<DeliveryResult> out = new ArrayList<>();
        context.forwarded().forEach(f -> out.add(f.record().value()));
        context.resetForwards();
        return out;
    }

    private List<String> keys() {
        List<String> keys = new ArrayList<>();
        try (KeyValueIterator<String, DeliveryResult> it = store.all()) {
            it.forEachRemaining(e -> keys.add(e.key));
        }
        return keys;
    }

    @Test
    void aRestartBetweenPartsStillEndsWithExactlyOneResult() {
        start();
        partResult(1, 3, DeliveryStatus.DELIVERED, 501L);
        partResult(2, 3, DeliveryStatus.FAILED, null);
        assertThat(forwarded()).isEmpty();
        crash();

        start();
        partResult(2, 3, DeliveryStatus.DELIVERED, 502L); // a copy after the restart: the first result of part 2 stays
        partResult(3, 3, DeliveryStatus.DELIVERED, 503L);
        assertThat(forwarded()).singleElement().satisfies(r -> {
            assertThat(r.getMessageId()).isEqualTo("n-1");
            assertThat(r.getStatus()).isEqualTo(DeliveryStatus.FAILED);
            assertThat(r.getReason()).isEqualTo("part 2/3: Bad Request: can't parse entities");
            assertThat(r.getSenderInstance()).isEqualTo("sender-2");
            assertThat(r.getProviderMessageId()).isEqualTo(501L);
        });
        assertThat(keys()).as("parts deleted, the marker kept").containsExactly("42\u001En-1#done");
        crash();

        start();
        partResult(1, 3, DeliveryStatus.DELIVERED, 501L);
        partResult(2, 3, DeliveryStatus.DELIVERED, 502L);
        partResult(3, 3, DeliveryStatus.DELIVERED, 503L);
        assertThat(forwarded()).as("copies after the result, even after a restart").isEmpty();
    }

    @Test
    void entriesOlderThanSevenDaysArePurgedByTheWallClockPunctuator() {
        start();
        partResult(1, 2, DeliveryStatus.DELIVERED, 1L); // part 2 never gets a result
        assertThat(keys()).containsExactly("42\u001En-1#1/2");
        assertThat(context.scheduledPunctuators()).singleElement().satisfies(p -> {
            assertThat(p.getInterval()).isEqualTo(PartResultsProcessor.PURGE_INTERVAL);
            p.getPunctuator().punctuate(TEN.plus(Duration.ofDays(7)).minusSeconds(1).toEpochMilli());
            assertThat(keys()).as("younger than 7 days: kept").containsExactly("42\u001En-1#1/2");
            p.getPunctuator().punctuate(TEN.plus(Duration.ofDays(7)).plusSeconds(1).toEpochMilli());
            assertThat(keys()).isEmpty();
        });
    }

    @Test
    void oneIdSplitForTwoChatsEndsWithOneResultPerChatWhenTheirPartsInterleave() {
        // the same id for two chats of one task: the topology routes both (the id is unique per bot; the sender ends the
        // reuse FAILED), each split in two parts; the results of their parts arrive interleaved
        start();
        Instant dueOther = DUE.plusMillis(30);
        partResult("42", DUE, 1, 2, DeliveryStatus.DELIVERED, 601L);
        partResult("43", dueOther, 1, 2, DeliveryStatus.FAILED, null);
        partResult("43", dueOther, 2, 2, DeliveryStatus.FAILED, null);
        partResult("42", DUE, 2, 2, DeliveryStatus.DELIVERED, 602L);
        assertThat(forwarded()).extracting(DeliveryResult::getChatId, DeliveryResult::getStatus)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("43", DeliveryStatus.FAILED),
                        org.assertj.core.groups.Tuple.tuple("42", DeliveryStatus.DELIVERED));
        assertThat(keys()).containsExactlyInAnyOrder("42\u001En-1#done", "43\u001En-1#done");
    }

    @Test
    void partsThePreviousVersionStoredWithoutTheChatStillCompleteTheirNotification() {
        start();
        // as the previous version stored the first result of part 1 of 2: under the parent's key alone
        store.put(PartResultsProcessor.partKey("n-1", 1, 2), part("42", DUE, 1, 2, DeliveryStatus.DELIVERED, 701L));
        store.put(PartResultsProcessor.partKey("n-2", 1, 2), part("44", DUE, 1, 2, DeliveryStatus.DELIVERED, 1L));
        partResult("43", DUE, 2, 2, DeliveryStatus.DELIVERED, 9L); // another chat's: not completed by 42's part
        assertThat(forwarded()).isEmpty();
        partResult("42", DUE, 1, 2, DeliveryStatus.DELIVERED, 799L); // a copy: the first result stays
        partResult("42", DUE, 2, 2, DeliveryStatus.DELIVERED, 702L);
        assertThat(forwarded()).singleElement().satisfies(r -> {
            assertThat(r.getChatId()).isEqualTo("42");
            assertThat(r.getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
            assertThat(r.getProviderMessageId()).isEqualTo(701L);
        });
        assertThat(keys()).containsExactlyInAnyOrder("42\u001En-1#done", "43\u001En-1#2/2", "n-2#1/2");
    }
}
