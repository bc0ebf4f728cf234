package dev.sluice.topology;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Change counters of a global store by key prefix (issue 21), so a stream thread may keep what it computed from the store
 * until the keys it read change. The global stream thread's {@link RawGlobalStoreUpdater} calls {@link #changed} after
 * each put or delete, for every prefix of the key that ends before a {@code /} (key {@code <bot>/<instance>}: the bot;
 * a bot id that itself holds a {@code /} is covered too); a reader takes {@link #version} of its prefix before it reads
 * the store. Its value read later is then at least as new as that version, and a change after the read bumps the version,
 * so a cached value is never kept past a change. What the store holds before the stream threads start (restored from
 * the topic) needs no counter: nothing is cached yet. Thread-safe (written by the global thread, read by stream threads).
 */
final class StoreChanges {
    private final ConcurrentHashMap<String, Long> versions = new ConcurrentHashMap<>();

    /** Called by the global thread after the store's entry {@code key} changed. */
    void changed(String key) {
        for (int slash = key.indexOf('/'); slash >= 0; slash = key.indexOf('/', slash + 1)) {
            versions.merge(key.substring(0, slash), 1L, Long::sum);
        }
    }

    /** The change count of the keys that start with {@code prefix + "/"}. */
    long version(String prefix) {
        return versions.getOrDefault(prefix, 0L);
    }
}
