package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link SeenIds}: the in-memory filter with the ids in batches ({@code <lane>-dedupe-batches}) answers as the per-id store
 * did; the per-id store ({@code <lane>-dedupe-store}, the previous version's) is still read, and written once the ids outgrow
 * the filter (issue 21).
 */
class SeenIdsTest {
    private static final long WINDOW_MS = 60_000;
    private static final long T0 = 1_800_000_000_000L;
    @TempDir
    Path stateDir;
    private final List<WindowStore<?, ?>> opened = new ArrayList<>();
    /** The per-id store, as the previous version wrote it (same name, type and serdes as in the topology). */
    private WindowStore<String, Long> store;
    private WindowStore<Long, byte[]> batches;

    @AfterEach
    void closeStores() {
        opened.stream().filter(WindowStore::isOpen).forEach(WindowStore::close);
    }

    /** Both persistent window stores in {@code stateDir}, opened again (what a restart finds). */
    private WindowStore<String, Long> open() {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "sluice-topology");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        MockProcessorContext<String, Object> context = new MockProcessorContext<>(props, new TaskId(0, 0), stateDir.toFile());
        store = Stores.windowStoreBuilder(Stores.persistentWindowStore("live-dedupe-store", Duration.ofMillis(WINDOW_MS),
                Duration.ofMillis(1), false), Serdes.String(), Serdes.Long()).withLoggingDisabled().build();
        store.init(context.getStateStoreContext(), store);
        opened.add(store);
        // as SluiceTopology declares it, without the record cache and the changelog (no task here)
        batches = Stores.windowStoreBuilder(Stores.persistentWindowStore("live-dedupe-batches",
                Duration.ofMillis(WINDOW_MS + SeenIds.BATCH_SPAN_MS), Duration.ofMillis(1), false), Serdes.Long(), Serdes.ByteArray())
                .withLoggingDisabled().build();
        batches.init(context.getStateStoreContext(), batches);
        opened.add(batches);
        return store;
    }

    private SeenIds seenIds(long nowMs) {
        return seenIds(nowMs, SeenIds.MAX_IDS);
    }

    private SeenIds seenIds(long nowMs, int maxIds) {
        return new SeenIds(open(), batches, WINDOW_MS, nowMs, maxIds);
    }

    /** Every id (→ its time) the batch store holds. */
    private Map<String, Long> inBatches() {
        Map<String, Long> ids = new HashMap<>();
        try (KeyValueIterator<Windowed<Long>, byte[]> it = batches.all()) {
            while (it.hasNext()) {
                KeyValue<Windowed<Long>, byte[]> kv = it.next();
                SeenIds.decode(kv.value, kv.key.window().start(), ids::put);
            }
        }
        return ids;
    }

    private int batchRecords() {
        int n = 0;
        try (KeyValueIterator<Windowed<Long>, byte[]> it = batches.all()) {
            for (; it.hasNext(); it.next()) {
                n++;
            }
        }
        return n;
    }

    private boolean inStore(String id, long now) {
        try (WindowStoreIterator<Long> it = store.fetch(id, now - WINDOW_MS, Long.MAX_VALUE)) {
            return it.hasNext();
        }
    }

    @Test
    void aNewIdIsNotSeenARememberedOneIsAndTheBatchesHoldEveryId() {
        // The stored format is the change (issue 21): every id is in a batch record with its time, none in the per-id store.
        SeenIds seen = seenIds(T0);
        for (int i = 0; i < 5_000; i++) {
            assertThat(seen.seen("id-" + i, T0 + i)).isFalse();
            seen.remember("id-" + i, T0 + i);
        }
        Map<String, Long> stored = inBatches();
        for (int i = 0; i < 5_000; i++) {
            assertThat(seen.seen("id-" + i, T0 + 5_000)).as("id-" + i).isTrue();
            assertThat(stored).containsEntry("id-" + i, T0 + i);
            assertThat(inStore("id-" + i, T0 + 5_000)).isFalse();
        }
        assertThat(batchRecords()).as("ids share records (at most %d bytes each)", SeenIds.BATCH_MAX_BYTES).isLessThan(50);
        assertThat(seen.seen("id-5000", T0 + 5_000)).isFalse();
        assertThat(seen.filtering()).isTrue();
    }

    @Test
    void afterARestartTheIdsInTheStoreAreSeen() {
        SeenIds before = seenIds(T0);
        before.remember("a", T0);
        before.remember("b", T0 + 10);
        store.close();
        batches.close();

        SeenIds after = seenIds(T0 + 20);
        assertThat(after.seen("a", T0 + 20)).isTrue();
        assertThat(after.seen("b", T0 + 20)).isTrue();
        assertThat(after.seen("c", T0 + 20)).isFalse();
    }

    @Test
    void anIdIsSeenForTheWholeWindowAcrossRotationsAndNotAfterIt() {
        SeenIds seen = seenIds(T0);
        seen.remember("early", T0 + WINDOW_MS - 1); // just before the first rotation
        seen.remember("late", T0 + WINDOW_MS + 5); // after it
        for (long now = T0 + WINDOW_MS; now < T0 + 3 * WINDOW_MS; now += 997) {
            assertThat(seen.seen("early", now)).as("early at +%d ms", now - T0).isEqualTo(now < T0 + 2 * WINDOW_MS - 1);
            if (now >= T0 + WINDOW_MS + 5) {
                assertThat(seen.seen("late", now)).as("late at +%d ms", now - T0).isEqualTo(now < T0 + 2 * WINDOW_MS + 5);
            }
        }
    }

    @Test
    void aFilterThatWouldOutgrowItsBoundStopsAnsweringAndEveryLookupReadsTheStore() {
        SeenIds seen = seenIds(T0);
        for (int i = 0; i <= SeenIds.MAX_IDS; i++) {
            seen.remember("x-" + i, T0);
        }
        assertThat(seen.filtering()).isFalse();
        assertThat(seen.seen("x-0", T0 + 1)).isTrue();
        assertThat(seen.seen("x-" + SeenIds.MAX_IDS, T0 + 1)).isTrue();
        assertThat(seen.seen("never", T0 + 1)).isFalse();
        // the batches' ids were copied into the per-id store, which every lookup now reads
        assertThat(inStore("x-0", T0 + 1)).isTrue();
        assertThat(inStore("x-" + SeenIds.MAX_IDS, T0 + 1)).isTrue();
        seen.remember("after", T0 + 2);
        assertThat(inStore("after", T0 + 2)).isTrue();
        assertThat(seen.seen("after", T0 + 3)).isTrue();
    }

    @Test
    void anIdThePreviousVersionWroteIsSeenWithinItsWindowAndNotAfter() {
        // The previous version's write, as RouteProcessor did it: store.put(id, now, now) on <lane>-dedupe-store.
        open().put("old-1", T0, T0);
        store.put("old-2", T0 + 100, T0 + 100);
        store.close();
        batches.close();

        SeenIds seen = seenIds(T0 + 1_000);
        assertThat(seen.filtering()).isTrue();
        assertThat(seen.seen("old-1", T0 + 1_000)).isTrue();
        assertThat(seen.seen("old-2", T0 + 1_000)).isTrue();
        assertThat(seen.seen("new-1", T0 + 1_000)).isFalse();
        assertThat(seen.seen("old-1", T0 + WINDOW_MS - 1)).isTrue();
        assertThat(seen.seen("old-1", T0 + WINDOW_MS + 1)).as("after its window").isFalse();
        assertThat(seen.seen("old-2", T0 + WINDOW_MS + 1)).isTrue();
        // old-1 again after its window: new, so remembered (in a batch, and exactly beside the filter: its hash is taken)
        seen.remember("old-1", T0 + WINDOW_MS + 1);
        assertThat(seen.seen("old-1", T0 + WINDOW_MS + 2)).isTrue();
        store.close();
        batches.close();

        SeenIds restarted = seenIds(T0 + WINDOW_MS + 3);
        assertThat(restarted.seen("old-1", T0 + WINDOW_MS + 3)).isTrue();
        assertThat(restarted.seen("old-2", T0 + WINDOW_MS + 3)).isTrue();
        assertThat(restarted.seen("old-1", T0 + 2 * WINDOW_MS + 2)).isFalse();
    }

    @Test
    void theSameIdAfterTheWindowIsNewThenADuplicateAgainAlsoAfterARestart() {
        SeenIds seen = seenIds(T0);
        seen.remember("again", T0);
        long later = T0 + WINDOW_MS + 1; // the filter still holds its hash (one rotation), its batch entry is past the window
        assertThat(seen.seen("again", later)).isFalse();
        seen.remember("again", later);
        assertThat(seen.seen("again", later + 1)).isTrue();
        assertThat(seen.seen("again", later + WINDOW_MS - 1)).isTrue();
        store.close();
        batches.close();

        SeenIds restarted = seenIds(later + 2);
        assertThat(restarted.seen("again", later + 2)).isTrue();
        assertThat(restarted.seen("again", later + WINDOW_MS + 1)).isFalse();
    }

    @Test
    void batchesThatOutgrowTheFilterAtARestartAreCopiedToThePerIdStoreAtTheFirstLookup() {
        SeenIds before = seenIds(T0, 1_000);
        for (int i = 0; i < 300; i++) {
            before.remember("b-" + i, T0 + i);
        }
        store.close();
        batches.close();

        SeenIds after = seenIds(T0 + 1_000, 100);
        assertThat(after.filtering()).isFalse();
        assertThat(inStore("b-0", T0 + 1_000)).as("nothing is written before a record is processed").isFalse();
        assertThat(after.seen("b-0", T0 + 1_000)).isTrue();
        assertThat(after.seen("b-299", T0 + 1_000)).isTrue();
        assertThat(after.seen("b-300", T0 + 1_000)).isFalse();
        assertThat(inStore("b-0", T0 + 1_000)).isTrue();
        assertThat(after.seen("b-0", T0 + WINDOW_MS + 1)).as("copied with its own time").isFalse();
        assertThat(after.seen("b-299", T0 + WINDOW_MS + 1)).isTrue();
    }

    @Test
    void theBatchStoreKeepsABatchForTheWindowAfterItsLastId() {
        SeenIds seen = seenIds(T0);
        seen.remember("first", T0);
        seen.remember("last", T0 + SeenIds.BATCH_SPAN_MS - 1); // same batch, timestamp T0
        seen.remember("other", T0 + WINDOW_MS + SeenIds.BATCH_SPAN_MS - 2); // moves the store's stream time
        assertThat(seen.seen("last", T0 + WINDOW_MS + SeenIds.BATCH_SPAN_MS - 2)).isTrue();
        assertThat(seen.seen("first", T0 + WINDOW_MS + SeenIds.BATCH_SPAN_MS - 2)).isFalse();
        store.close();
        batches.close();
        SeenIds restarted = seenIds(T0 + WINDOW_MS + SeenIds.BATCH_SPAN_MS - 2);
        assertThat(restarted.seen("last", T0 + WINDOW_MS + SeenIds.BATCH_SPAN_MS - 2)).isTrue();
        assertThat(restarted.seen("first", T0 + WINDOW_MS + SeenIds.BATCH_SPAN_MS - 2)).isFalse();
    }

    @Test
    void theLongLongMapKeepsTheLastValueOfEachKeyIncludingZero() {
        LongLongMap map = new LongLongMap();
        for (long v = -1_000; v <= 1_000; v++) {
            map.put(v * 0x9E3779B97F4A7C15L, v);
        }
        map.put(0, 7);
        for (long v = -1_000; v <= 1_000; v++) {
            assertThat(map.get(v * 0x9E3779B97F4A7C15L)).isEqualTo(v == 0 ? 7 : v);
        }
        assertThat(map.size()).isEqualTo(2_001);
        assertThat(map.get(12_345)).isEqualTo(Long.MIN_VALUE);
    }

    @Test
    void theLongSetHoldsWhatWasAddedIncludingZero() {
        LongSet set = new LongSet();
        for (long v = -1_000; v <= 1_000; v++) {
            set.add(v * 0x9E3779B97F4A7C15L);
        }
        for (long v = -1_000; v <= 1_000; v++) {
            assertThat(set.contains(v * 0x9E3779B97F4A7C15L)).isTrue();
        }
        assertThat(set.size()).isEqualTo(2_001);
        assertThat(set.contains(12_345)).isFalse();
        assertThat(SeenIds.hash("dup-1")).isEqualTo(SeenIds.hash("dup-1")).isNotEqualTo(SeenIds.hash("dup-2"));
    }
}
