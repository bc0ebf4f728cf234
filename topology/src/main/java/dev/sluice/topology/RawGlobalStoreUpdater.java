package dev.sluice.topology;

import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Keeps a global store as a copy of a compacted topic: latest raw value bytes per key, a tombstone deletes.
 * Raw bytes on purpose: a global store is restored by copying the topic, so the store must hold exactly
 * what the topic holds; readers decode (and skip what they cannot read) when they look a key up.
 */
final class RawGlobalStoreUpdater implements Processor<String, byte[], Void, Void> {
    private final String storeName;
    private KeyValueStore<String, byte[]> store;

    RawGlobalStoreUpdater(String storeName) {
        this.storeName = storeName;
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
            store.put(record.key(), record.value());
        }
    }
}
