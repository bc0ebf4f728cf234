package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21 session 10: a user without an entry in {@code preferences-store} is answered without a read, and no entry is
 * missed: one the global thread's restore wrote before the first lookup, or one the updater writes after it.
 * (A preference changed at runtime through the topology: {@code RoutingTest.aPreferenceChangedAtRuntimeIsSeenByTheNextNotification}.)
 */
class PreferenceKeysTest {
    @TempDir
    Path stateDir;
    private KeyValueStore<String, byte[]> rocks;
    /** {@link #rocks} read-only, with its {@code get} calls counted. */
    private ReadOnlyKeyValueStore<String, byte[]> store;
    private final AtomicInteger reads = new AtomicInteger();

    @BeforeEach
    @SuppressWarnings("unchecked")
    void open() {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "sluice-topology");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        MockProcessorContext<Void, Void> context = new MockProcessorContext<>(props, new TaskId(0, 0), stateDir.toFile());
        rocks = Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(SluiceTopology.PREFERENCES_STORE), Serdes.String(),
                Serdes.ByteArray()).withLoggingDisabled().build();
        rocks.init(context.getStateStoreContext(), rocks);
        store = (ReadOnlyKeyValueStore<String, byte[]>) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {ReadOnlyKeyValueStore.class}, (proxy, method, args) -> {
                    if (method.getName().equals("get")) {
                        reads.incrementAndGet();
                    }
                    try {
                        return method.invoke(rocks, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @AfterEach
    void close() {
        rocks.close();
    }

    @Test
    void anEntryRestoredBeforeTheFirstLookupAndOnesWrittenAfterItAreSeen() {
        rocks.put("u-restored", new byte[] {1}); // the global thread's restore writes past the updater
        PreferenceKeys keys = new PreferenceKeys();
        DigestPreferences preferences = new DigestPreferences(store, (topic, bytes) -> null, "preferences", keys);

        assertThat(keys.mayHave(store, "u-restored")).isTrue();
        for (int i = 0; i < 1_000; i++) {
            assertThat(preferences.optedOut("u-" + i)).isFalse();
        }
        assertThat(reads.get()).as("users without an entry read no store").isZero();

        // what RawGlobalStoreUpdater does for a put after the set was loaded: tell, then write
        assertThat(keys.mayHave(store, "u-7")).isFalse();
        keys.written("u-7");
        rocks.put("u-7", new byte[] {1});
        assertThat(keys.mayHave(store, "u-7")).isTrue();
        rocks.delete("u-7"); // deleted: still "may have" (a read, which finds nothing)
        assertThat(keys.mayHave(store, "u-7")).isTrue();
        assertThat(preferences.optedOut("u-7")).isFalse();
        assertThat(reads.get()).isEqualTo(1);
    }

    @Test
    void pastItsBoundTheSetStopsAnsweringAndEveryLookupReads() {
        PreferenceKeys keys = new PreferenceKeys();
        for (int i = 0; i <= PreferenceKeys.MAX_USERS; i++) {
            keys.written("u-" + i);
        }
        assertThat(keys.filtering()).isFalse();
        assertThat(keys.mayHave(store, "never-written")).isTrue();
    }
}
