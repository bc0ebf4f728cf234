package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.Notification;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RouteDedupe}'s upgrade over the real persistent window stores (as {@link SeenIdsTest} opens them): ids the
 * previous version remembered under its key (the id, no chat; written here by its own path, {@link SeenIds#remember} of
 * {@link RouteDedupe#legacyKey} into {@code live-dedupe-batches}, or one {@code put} per id into {@code live-dedupe-store}
 * as the version before the batches did) are still duplicates within the window after a restart with the new key.
 */
class RouteDedupeTest {
    private static final long WINDOW_MS = 60_000;
    private static final long T0 = 1_800_000_000_000L;
    @TempDir
    Path stateDir;
    private final List<WindowStore<?, ?>> opened = new ArrayList<>();
    private WindowStore<String, Long> perId;
    private WindowStore<Long, byte[]> batches;

    @AfterEach
    void closeStores() {
        opened.stream().filter(WindowStore::isOpen).forEach(WindowStore::close);
    }

    /** Both stores in {@code stateDir}, opened (again): what a restart finds. */
    private void openStores() {
        opened.stream().filter(WindowStore::isOpen).forEach(WindowStore::close);
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "sluice-topology");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        MockProcessorContext<String, Object> context = new MockProcessorContext<>(props, new TaskId(0, 0), stateDir.toFile());
        perId = Stores.windowStoreBuilder(Stores.persistentWindowStore("live-dedupe-store", Duration.ofMillis(WINDOW_MS),
                Duration.ofMillis(1), false), Serdes.String(), Serdes.Long()).withLoggingDisabled().build();
        perId.init(context.getStateStoreContext(), perId);
        opened.add(perId);
        batches = Stores.windowStoreBuilder(Stores.persistentWindowStore("live-dedupe-batches",
                Duration.ofMillis(WINDOW_MS + SeenIds.BATCH_SPAN_MS), Duration.ofMillis(1), false), Serdes.Long(),
                Serdes.ByteArray()).withLoggingDisabled().build();
        batches.init(context.getStateStoreContext(), batches);
        opened.add(batches);
    }

    /** The new version after a restart at {@code nowMs}, as {@link RouteDedupe#open} builds it. */
    private RouteDedupe restarted(long nowMs, int maxIds) {
        openStores();
        return new RouteDedupe(new SeenIds(perId, batches, WINDOW_MS, nowMs, maxIds, true, RouteDedupe::isLegacy));
    }

    private static Notification n(String id, String chat) {
        return Harness.notification(id, chat, Instant.ofEpochMilli(T0)).build();
    }

    private static Notification replay(String id, String chat, String from) {
        return Harness.notification(id, chat, Instant.ofEpochMilli(T0))
                .setAttributes(Map.of(RouteProcessor.REPLAYED_FROM_ATTRIBUTE, from)).build();
    }

    /** As `sluice replay` writes it: sluice.replayed.from and sluice.replayed.at (the run's time). */
    private static Notification replay(String id, String chat, String from, long atMs) {
        return Harness.notification(id, chat, Instant.ofEpochMilli(T0)).setAttributes(Map.of(
                RouteProcessor.REPLAYED_FROM_ATTRIBUTE, from, "sluice.replayed.at", Long.toString(atMs))).build();
    }

    /**
     * Found from outside: a second `sluice replay` of the same result within dedupe.window.ms was dropped here without a
     * result (its key held only sluice.replayed.from), while the CLI said "written". A replay run is a new attempt (the
     * sender's marks decide whether it is sent: an earlier delivered attempt is not sent again and says so); the same
     * replay record written twice (same run, same sluice.replayed.at) is still one.
     */
    @Test
    void aSecondReplayRunOfOneResultIsANewAttemptAndOneRunWrittenTwiceIsOne() {
        RouteDedupe d = restarted(T0, SeenIds.MAX_IDS);
        String from = "delivery.results-0@7:FAILED";
        assertThat(d.repeat(replay("r-1", "42", from, T0 + 1), T0 + 10)).isFalse();
        assertThat(d.repeat(replay("r-1", "42", from, T0 + 1), T0 + 20)).as("one run's record written twice").isTrue();
        assertThat(d.repeat(replay("r-1", "42", from, T0 + 5_000), T0 + 5_010)).as("a second run").isFalse();
        assertThat(RouteDedupe.isLegacy(RouteDedupe.key(replay("r-1", "42", from, T0 + 1)))).isFalse();
    }

    @Test
    void anIdThePreviousVersionBatchedIsARepeatWithinTheWindowAndNotAfterIt() {
        openStores();
        SeenIds previous = new SeenIds(perId, batches, WINDOW_MS, T0); // the previous version: the same SeenIds, bare keys
        previous.remember(RouteDedupe.legacyKey(n("old-1", "42")), T0);
        previous.remember(RouteDedupe.legacyKey(replay("old-2", "42", "delivery.results-0@7:FAILED")), T0 + 10);

        RouteDedupe next = restarted(T0 + 1_000, SeenIds.MAX_IDS);
        assertThat(next.repeat(n("old-1", "42"), T0 + 2_000)).as("a retry after the upgrade").isTrue();
        assertThat(next.repeat(replay("old-2", "42", "delivery.results-0@7:FAILED"), T0 + 2_000)).isTrue();
        assertThat(next.repeat(n("old-2", "42"), T0 + 2_000)).as("the original of a replay is another key").isFalse();
        assertThat(next.repeat(n("new-1", "42"), T0 + 2_000)).isFalse();
        assertThat(next.repeat(n("new-1", "42"), T0 + 3_000)).isTrue();
        assertThat(next.repeat(n("new-1", "43"), T0 + 3_000)).as("new keys name their chat").isFalse();
        // A bare key names no chat: until the window since it passes, it drops the id for any chat of the task (as the
        // previous version did); documented in docs/operations.md.
        assertThat(next.repeat(n("old-1", "44"), T0 + 4_000)).isTrue();
        assertThat(next.repeat(n("old-1", "42"), T0 + WINDOW_MS + 1)).as("the window since the old copy passed").isFalse();
    }

    @Test
    void anIdTheVersionBeforeTheBatchesPutInThePerIdStoreIsARepeatWithinTheWindow() {
        openStores();
        perId.put(RouteDedupe.legacyKey(n("older-1", "42")), T0, T0);

        RouteDedupe next = restarted(T0 + 1_000, SeenIds.MAX_IDS);
        assertThat(next.repeat(n("older-1", "42"), T0 + 2_000)).isTrue();
        assertThat(next.repeat(n("older-1", "42"), T0 + WINDOW_MS + 1)).isFalse();
    }

    @Test
    void theNewKeysAreReadBackAfterARestartAndAreNotTakenForTheOldFormat() {
        RouteDedupe first = restarted(T0, SeenIds.MAX_IDS);
        assertThat(first.repeat(n("k-1", "42"), T0)).isFalse();
        assertThat(first.repeat(replay("k-2", "42", "r"), T0)).isFalse();

        openStores();
        SeenIds seen = new SeenIds(perId, batches, WINDOW_MS, T0 + 1_000, SeenIds.MAX_IDS, true, RouteDedupe::isLegacy);
        assertThat(seen.legacyUntilMs()).as("no id of the old format").isEqualTo(Long.MIN_VALUE);
        RouteDedupe next = new RouteDedupe(seen);
        assertThat(next.repeat(n("k-1", "42"), T0 + 2_000)).isTrue();
        assertThat(next.repeat(replay("k-2", "42", "r"), T0 + 2_000)).isTrue();
        assertThat(next.repeat(n("k-1", "43"), T0 + 2_000)).isFalse();
    }

    @Test
    void whenLoadingStopsAtAnOverflowTheOldFormatIsCheckedForAWindowFromInit() {
        openStores();
        SeenIds previous = new SeenIds(perId, batches, WINDOW_MS, T0);
        for (int i = 0; i < 50; i++) {
            previous.remember("new\u001Eformat-" + i, T0); // fills the filter first
        }
        previous.remember(RouteDedupe.legacyKey(n("old-x", "42")), T0);

        openStores();
        SeenIds seen = new SeenIds(perId, batches, WINDOW_MS, T0 + 1_000, 10, true, RouteDedupe::isLegacy);
        assertThat(seen.legacyUntilMs()).isEqualTo(T0 + 1_000 + WINDOW_MS);
        assertThat(new RouteDedupe(seen).repeat(n("old-x", "42"), T0 + 2_000)).isTrue();
    }

    @Test
    void theOldFormatIsAKeyWithoutTheChatSeparatorBeforeAnyReplaySeparator() {
        assertThat(RouteDedupe.isLegacy("id-1")).isTrue();
        assertThat(RouteDedupe.isLegacy("id-1\u001Fdelivery.results-0@7:FAILED")).isTrue();
        assertThat(RouteDedupe.isLegacy("id-1\u001Fan attribute with \u001E in it")).isTrue();
        assertThat(RouteDedupe.isLegacy(RouteDedupe.key(n("id-1", "42")))).isFalse();
        assertThat(RouteDedupe.isLegacy(RouteDedupe.key(replay("id-1", "@chan", "x\u001Ey")))).isFalse();
        assertThat(RouteDedupe.key(n("id-1", "42"))).isEqualTo("42\u001Eid-1");
    }
}
