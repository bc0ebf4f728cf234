package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link SeenIds}: the in-memory filter in front of the dedupe window store answers as the store would (issue 21). */
class SeenIdsTest {
    private static final long WINDOW_MS = 60_000;
    private static final long T0 = 1_800_000_000_000L;
    @TempDir
    Path stateDir;
    private final List<WindowStore<String, Long>> opened = new ArrayList<>();
    private WindowStore<String, Long> store;

    @AfterEach
    void closeStores() {
        opened.stream().filter(WindowStore::isOpen).forEach(WindowStore::close);
    }

    /** The persistent window store in {@code stateDir}, opened again (what a restart finds). */
    private WindowStore<String, Long> open() {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "sluice-topology");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        MockProcessorContext<String, Object> context = new MockProcessorContext<>(props, new TaskId(0, 0), stateDir.toFile());
        store = Stores.windowStoreBuilder(Stores.persistentWindowStore("live-dedupe-store", Duration.ofMillis(WINDOW_MS),
                Duration.ofMillis(1), false), Serdes.String(), Serdes.Long()).withLoggingDisabled().build();
        store.init(context.getStateStoreContext(), store);
        opened.add(store);
        return store;
    }

    private boolean inStore(String id, long now) {
        try (WindowStoreIterator<Long> it = store.fetch(id, now - WINDOW_MS, Long.MAX_VALUE)) {
            return it.hasNext();
        }
    }

    @Test
    void aNewIdIsNotSeenARememberedOneIsAndTheStoreHoldsEveryId() {
        SeenIds seen = new SeenIds(open(), WINDOW_MS, T0);
        for (int i = 0; i < 5_000; i++) {
            assertThat(seen.seen("id-" + i, T0 + i)).isFalse();
            seen.remember("id-" + i, T0 + i);
        }
        for (int i = 0; i < 5_000; i++) {
            assertThat(seen.seen("id-" + i, T0 + 5_000)).as("id-" + i).isTrue();
            assertThat(inStore("id-" + i, T0 + 5_000)).isTrue();
        }
        assertThat(seen.seen("id-5000", T0 + 5_000)).isFalse();
        assertThat(seen.filtering()).isTrue();
    }

    @Test
    void afterARestartTheIdsInTheStoreAreSeen() {
        SeenIds before = new SeenIds(open(), WINDOW_MS, T0);
        before.remember("a", T0);
        before.remember("b", T0 + 10);
        store.close();

        SeenIds after = new SeenIds(open(), WINDOW_MS, T0 + 20);
        assertThat(after.seen("a", T0 + 20)).isTrue();
        assertThat(after.seen("b", T0 + 20)).isTrue();
        assertThat(after.seen("c", T0 + 20)).isFalse();
    }

    @Test
    void anIdIsSeenForTheWholeWindowAcrossRotationsAndNotAfterIt() {
        SeenIds seen = new SeenIds(open(), WINDOW_MS, T0);
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
        SeenIds seen = new SeenIds(open(), WINDOW_MS, T0);
        for (int i = 0; i <= SeenIds.MAX_IDS; i++) {
            seen.remember("x-" + i, T0);
        }
        assertThat(seen.filtering()).isFalse();
        assertThat(seen.seen("x-0", T0 + 1)).isTrue();
        assertThat(seen.seen("x-" + SeenIds.MAX_IDS, T0 + 1)).isTrue();
        assertThat(seen.seen("never", T0 + 1)).isFalse();
    }

    @Test
    void theLongSetHoldsWhatWasAddedIncludingZero() {
        SeenIds.LongSet set = new SeenIds.LongSet();
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
