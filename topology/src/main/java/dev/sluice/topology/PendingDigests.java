package dev.sluice.topology;

import dev.sluice.avro.DigestEntry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A lane's {@code <lane>-digest-store} of one task with the set of its keys in memory (issue 21): most notifications
 * have no pending digest entry, and a lookup of a key that is not pending answers from the set instead of reading
 * the store. The set is loaded from the (restored) store when the processor is initialised, and every write goes
 * through here, so the two agree; it holds at most {@code digest.max.keys} keys (reaching it flushes them all). It also
 * counts the pending keys per chat ({@link #holdsChat}), so a notification to a chat with nothing pending needs no
 * {@link DigestKey} built (issue 21 session 10: building it was ~2% of the route's time). One instance per processor, used
 * by its task's stream thread only.
 */
final class PendingDigests {
    private final KeyValueStore<String, DigestEntry> store;
    private final Set<String> keys = new HashSet<>();
    /** Pending keys per chat ({@link DigestKey#chatOf} of each key in {@link #keys}). */
    private final Map<String, Integer> chats = new HashMap<>();
    /** The highest {@code opened_seq} given (or read from the restored store). */
    private long lastOpenedSeq;

    /** Reads the keys the store holds (entries a previous run left pending). */
    PendingDigests(KeyValueStore<String, DigestEntry> store) {
        this.store = store;
        try (KeyValueIterator<String, DigestEntry> it = store.all()) {
            while (it.hasNext()) {
                KeyValue<String, DigestEntry> kv = it.next();
                lastOpenedSeq = Math.max(lastOpenedSeq, kv.value.getOpenedSeq());
                added(kv.key);
            }
        }
    }

    /** The pending entry of {@code key}, or null; no store read when the key is not pending. */
    DigestEntry get(String key) {
        return keys.contains(key) ? store.get(key) : null;
    }

    /** Whether some key of {@code chat} ({@link DigestKey#of} with that chat) is pending. */
    boolean holdsChat(String chat) {
        return !chats.isEmpty() && chats.containsKey(chat);
    }

    void put(String key, DigestEntry entry) {
        store.put(key, entry);
        added(key);
    }

    void delete(String key) {
        store.delete(key);
        if (keys.remove(key)) {
            chats.computeIfPresent(DigestKey.chatOf(key), (chat, n) -> n == 1 ? null : n - 1);
        }
    }

    private void added(String key) {
        if (keys.add(key)) {
            chats.merge(DigestKey.chatOf(key), 1, Integer::sum);
        }
    }

    /** The {@code opened_seq} of an entry opened now: higher than every entry pending or given before. */
    long nextOpenedSeq() {
        return ++lastOpenedSeq;
    }

    /**
     * Every pending entry in the order digests must leave (a copy: the caller may delete while going through it): by
     * {@code folded_at}, then {@code opened_seq}, then key; so a chat's entries leave in the order they were opened.
     */
    List<KeyValue<String, DigestEntry>> inOpeningOrder() {
        List<KeyValue<String, DigestEntry>> all = all();
        all.sort(OPENING_ORDER);
        return all;
    }

    /**
     * Removes the pending entries of {@code key}'s chat (the chat part of the key: after any migration) opened before
     * {@code entry}, and returns them in opening order: they must leave before it.
     */
    List<KeyValue<String, DigestEntry>> removeOpenedBefore(String key, DigestEntry entry) {
        String chat = DigestKey.chatOf(key);
        List<KeyValue<String, DigestEntry>> older = new ArrayList<>();
        if (!holdsChat(chat)) {
            return older;
        }
        KeyValue<String, DigestEntry> it = KeyValue.pair(key, entry);
        for (KeyValue<String, DigestEntry> kv : inOpeningOrder()) {
            if (DigestKey.chatOf(kv.key).equals(chat) && OPENING_ORDER.compare(kv, it) < 0) {
                delete(kv.key);
                older.add(kv);
            }
        }
        return older;
    }

    static final java.util.Comparator<KeyValue<String, DigestEntry>> OPENING_ORDER =
            java.util.Comparator.comparing((KeyValue<String, DigestEntry> kv) -> kv.value.getFoldedAt())
                    .thenComparingLong(kv -> kv.value.getOpenedSeq()).thenComparing(kv -> kv.key);

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
