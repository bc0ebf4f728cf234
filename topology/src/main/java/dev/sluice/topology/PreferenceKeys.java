package dev.sluice.topology;

import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * Which users have an entry in the global store {@value SluiceTopology#PREFERENCES_STORE}, kept in memory (issue 21 session
 * 10, as {@link ChatStatusKeys} does for chat status): {@link DigestPreferences} read the store (a RocksDB get and a decode)
 * for every ROUTINE notification that does not fold, though most users never set a preference. A set of 64-bit hashes of
 * the user ids ({@link SeenIds#hash}) that have had an entry: a user whose hash is not in it has none and is answered without
 * a read; one whose hash is in it (an entry, a deleted one, or rarely another user with the same hash) is read as before. The
 * set only grows (a superset costs a read, never a wrong answer).
 *
 * <p>Kept right: the preferences updater ({@link RawGlobalStoreUpdater}, global stream thread) tells every put
 * ({@link #written}) before it writes; the set is loaded from the store at the first lookup. Kafka Streams fills a global store
 * past its processor only while the global thread initialises (restore), which ends before any stream thread processes; from
 * then on the updater is the store's only writer. So an entry is in the store only after its user is in the set or was
 * loaded with it. Past {@value #MAX_USERS} users the set stops answering (every lookup reads the store, as before), so its
 * memory stays below ~32 MiB. One instance per built topology; written by the global stream thread, read by the stream
 * threads (synchronized: the lock is uncontended but for a preference change).
 */
final class PreferenceKeys {
    /** Users the set holds before it gives up (every lookup reads the store). */
    static final int MAX_USERS = 1 << 20;

    private final LongSet users = new LongSet();
    private boolean loaded;
    private boolean overflowed;

    /** Global stream thread: before a put of {@code user}'s entry. */
    synchronized void written(String user) {
        add(SeenIds.hash(user));
    }

    /** Whether {@code user} may have an entry in {@code store}; false: certainly none, no read needed. */
    synchronized boolean mayHave(ReadOnlyKeyValueStore<String, byte[]> store, String user) {
        if (!loaded) {
            try (KeyValueIterator<String, byte[]> it = store.all()) {
                while (it.hasNext() && !overflowed) {
                    add(SeenIds.hash(it.next().key));
                }
            }
            loaded = true;
        }
        return overflowed || users.contains(SeenIds.hash(user));
    }

    /** Whether the set answers (false once it overflowed; tests). */
    synchronized boolean filtering() {
        return !overflowed;
    }

    private void add(long hash) {
        if (overflowed) {
            return;
        }
        users.add(hash);
        if (users.size() > MAX_USERS) {
            overflowed = true;
        }
    }
}
