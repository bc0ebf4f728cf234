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
 * counts the pending keys per chat and per chat and bot ({@link #holdsChat}), so a notification to a chat with nothing
 * pending needs no {@link DigestKey} built (issue 21 session 10: building it was ~2% of the route's time), and numbers
 * the folds ({@link #nextFoldSeq}): the order digests leave in ({@link #LEAVING_ORDER}). It also keeps the earliest
 * {@code expires_at} of each pending key that has one ({@link #earliestDeadline}, {@link #dueBy}), so the deadline check
 * reads the store only when an entry is due. One instance per processor, used by its task's stream thread only.
 */
final class PendingDigests {
    private final KeyValueStore<String, DigestEntry> store;
    private final Set<String> keys = new HashSet<>();
    /** Pending keys per chat ({@link DigestKey#chatOf} of each key in {@link #keys}). */
    private final Map<String, Integer> chats = new HashMap<>();
    /** Pending keys per chat and bot ({@link DigestKey#chatAndBotOf} of each key in {@link #keys}). */
    private final Map<String, Integer> chatBots = new HashMap<>();
    /** The earliest {@code expires_at} (epoch ms) of each pending key whose entry folds a notification with one. */
    private final Map<String, Long> deadlines = new HashMap<>();
    /** The highest {@code fold_seq} given (or read from the restored store). */
    private long lastFoldSeq;

    /** Reads the keys the store holds (entries a previous run left pending). */
    PendingDigests(KeyValueStore<String, DigestEntry> store) {
        this.store = store;
        try (KeyValueIterator<String, DigestEntry> it = store.all()) {
            while (it.hasNext()) {
                KeyValue<String, DigestEntry> kv = it.next();
                lastFoldSeq = Math.max(lastFoldSeq, kv.value.getFoldSeq());
                added(kv.key, kv.value);
            }
        }
    }

    /** The pending entry of {@code key}, or null; no store read when the key is not pending. */
    DigestEntry get(String key) {
        return keys.contains(key) ? store.get(key) : null;
    }

    /**
     * Whether some key of {@code chat} and {@code bot} ({@link DigestKey#of} with that chat) is pending. Per bot: two bots
     * writing to one user are two conversations, with no order between them.
     */
    boolean holdsChat(String chat, String bot) {
        return !chats.isEmpty() && chats.containsKey(chat) && chatBots.containsKey(DigestKey.chatAndBot(chat, bot));
    }

    void put(String key, DigestEntry entry) {
        store.put(key, entry);
        added(key, entry);
    }

    void delete(String key) {
        store.delete(key);
        deadlines.remove(key);
        if (keys.remove(key)) {
            chats.computeIfPresent(DigestKey.chatOf(key), (chat, n) -> n == 1 ? null : n - 1);
            chatBots.computeIfPresent(DigestKey.chatAndBotOf(key), (chat, n) -> n == 1 ? null : n - 1);
        }
    }

    private void added(String key, DigestEntry entry) {
        java.time.Instant deadline = Outbound.earliestDeadline(entry);
        if (deadline == null) {
            deadlines.remove(key);
        } else {
            deadlines.put(key, deadline.toEpochMilli());
        }
        if (keys.add(key)) {
            chats.merge(DigestKey.chatOf(key), 1, Integer::sum);
            chatBots.merge(DigestKey.chatAndBotOf(key), 1, Integer::sum);
        }
    }

    /** The {@code fold_seq} of a fold now (opening an entry or adding to one): higher than every one given before. */
    long nextFoldSeq() {
        return ++lastFoldSeq;
    }

    /**
     * Every pending entry in the order digests must leave (a copy: the caller may delete while going through it): by
     * {@code fold_seq} (the task's order of their latest folds, which survives a restart and a move to another instance,
     * unlike wall-clock times), then {@code folded_at} and key for entries written before it existed (0).
     */
    List<KeyValue<String, DigestEntry>> inLeavingOrder() {
        List<KeyValue<String, DigestEntry>> all = all();
        all.sort(LEAVING_ORDER);
        return all;
    }

    /**
     * Removes the pending entries of {@code key}'s chat and bot (the parts of the key: the chat after any migration) that
     * leave before {@code entry}, and returns them in leaving order: a full entry leaving now must not overtake them.
     */
    List<KeyValue<String, DigestEntry>> removeLeavingBefore(String key, DigestEntry entry) {
        String chatBot = DigestKey.chatAndBotOf(key);
        List<KeyValue<String, DigestEntry>> before = new ArrayList<>();
        if (!chatBots.containsKey(chatBot)) {
            return before;
        }
        KeyValue<String, DigestEntry> it = KeyValue.pair(key, entry);
        for (KeyValue<String, DigestEntry> kv : inLeavingOrder()) {
            if (DigestKey.chatAndBotOf(kv.key).equals(chatBot) && LEAVING_ORDER.compare(kv, it) < 0) {
                delete(kv.key);
                before.add(kv);
            }
        }
        return before;
    }

    static final java.util.Comparator<KeyValue<String, DigestEntry>> LEAVING_ORDER =
            java.util.Comparator.comparingLong((KeyValue<String, DigestEntry> kv) -> kv.value.getFoldSeq())
                    .thenComparing(kv -> kv.value.getFoldedAt()).thenComparing(kv -> kv.key);

    /** The earliest {@code expires_at} (epoch ms) of all pending entries, or {@link Long#MAX_VALUE} when none has one. */
    long earliestDeadline() {
        long earliest = Long.MAX_VALUE;
        for (long d : deadlines.values()) {
            earliest = Math.min(earliest, d);
        }
        return earliest;
    }

    /** The pending keys whose earliest {@code expires_at} is at or before {@code atMs}. */
    Set<String> dueBy(long atMs) {
        Set<String> due = new HashSet<>();
        deadlines.forEach((key, d) -> {
            if (d <= atMs) {
                due.add(key);
            }
        });
        return due;
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
