package dev.sluice.topology;

import java.util.function.Consumer;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Keeps a global store as a copy of a compacted topic: latest raw value bytes per key, a tombstone deletes.
 * Raw bytes on purpose: a global store is restored by copying the topic, so the store must hold exactly
 * what the topic holds; readers decode (and skip what they cannot read) when they look a key up. Each change is told to
 * {@link StoreChanges} after it is written (readers that cache what they decoded, {@link BotPressure}), and each put's key
 * to {@code beforePut} before it is written (readers that keep the store's keys in memory, {@link PreferenceKeys}). Runs on
 * the global stream thread.
 */
final class RawGlobalStoreUpdater implements Processor<String, byte[], Void, Void> {
    private final String storeName;
    private final StoreChanges changes;
    private final Consumer<String> beforePut;
    private KeyValueStore<String, byte[]> store;

    RawGlobalStoreUpdater(String storeName) {
        this(storeName, new StoreChanges());
    }

    RawGlobalStoreUpdater(String storeName, StoreChanges changes) {
        this(storeName, changes, key -> { });
    }

    RawGlobalStoreUpdater(String storeName, StoreChanges changes, Consumer<String> beforePut) {
        this.storeName = storeName;
        this.changes = changes;
        this.beforePut = beforePut;
    }

    @Override
    public void init(ProcessorContext<Void, Void> context) {
        store = context.getStateStore(storeName);
    }

    @Override
    public void process(Record<String, byte[]> record) {
        if (record.key() == null) {
            return;
        }
        if (record.value() == null) {
            store.delete(record.key());
        } else {
            beforePut.accept(record.key());
            store.put(record.key(), record.value());
        }
        changes.changed(record.key());
    }
}
