package dev.sluice.topology;

import dev.sluice.avro.DigestEntry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A lane's {@code <lane>-digest-store} of one task with the set of its keys in memory (issue 21): most notifications
 * have no pending digest entry, and a lookup of a key that is not pending answers from the set instead of reading
 * the store. The set is loaded from the (restored) store when the processor is initialised, and every write goes
 * through here, so the two agree; it holds at most {@code digest.max.keys} keys (reaching it flushes them all). One
 * instance per processor, used by its task's stream thread only.
 */
final class PendingDigests {
    private final KeyValueStore<String, DigestEntry> store;
    private final Set<String> keys = new HashSet<>();

    /** Reads the keys the store holds (entries a previous run left pending). */
    PendingDigests(KeyValueStore<String, DigestEntry> store) {
        this.store = store;
        try (KeyValueIterator<String, DigestEntry> it = store.all()) {
            while (it.hasNext()) {
                keys.add(it.next().key);
            }
        }
    }

    /** The pending entry of {@code key}, or null; no store read when the key is not pending. */
    DigestEntry get(String key) {
        return keys.contains(key) ? store.get(key) : null;
    }

    void put(String key, DigestEntry entry) {
        store.put(key, entry);
        keys.add(key);
    }

    void delete(String key) {
        store.delete(key);
        keys.remove(key);
    }

    /** Number of pending keys. */
    int size() {
        return keys.size();
    }

    /** Every pending entry, in key order (a copy: the caller may delete while going through it). */
    List<KeyValue<String, DigestEntry>> all() {
        List<KeyValue<String, DigestEntry>> all = new ArrayList<>(keys.size());
        if (keys.isEmpty()) {
            return all;
        }
        try (KeyValueIterator<String, DigestEntry> it = store.all()) {
            it.forEachRemaining(all::add);
        }
        return all;
    }
}
