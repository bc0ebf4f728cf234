package dev.sluice.topology;

import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * A lane's {@code <lane>-dedupe-store} of one task with a filter in memory in front of it (issue 21): the window store's
 * {@code fetch} opens a RocksDB iterator per segment for every notification, though almost every id is new. The filter holds
 * a 64-bit hash of every id the store holds within {@code dedupe.window.ms}: an id whose hash is not in it was not seen, and
 * is answered without reading the store; a hash in it (a duplicate, or rarely another id with the same hash) is checked in the
 * store as before. Every id is still written to the store (and its changelog), which stays what a restart restores.
 *
 * <p>The filter is loaded from the (restored) store when the processor is initialised, and every write goes through
 * {@link #remember}. Two generations: a hash stays in the current one until the next rotation and in the previous one until
 * the rotation after, and rotations are at least {@code dedupe.window.ms} apart, so a hash stays at least the window. When
 * a generation would hold more than {@value #MAX_IDS} ids the filter stops answering (every lookup reads the store, as
 * before) until the processor is initialised again, so its memory stays below ~{@code 2 x 4} MiB per lane and task. One
 * instance per processor, used by its task's stream thread only.
 */
final class SeenIds {
    /** Ids one generation holds before the filter gives up (reads the store for every id). */
    static final int MAX_IDS = 1 << 18;

    private final WindowStore<String, Long> store;
    private final long windowMs;
    private LongSet current = new LongSet();
    private LongSet previous = new LongSet();
    private long rotateAtMs;
    private boolean overflowed;

    /** Reads the ids the store holds (a previous run's, restored). */
    SeenIds(WindowStore<String, Long> store, long windowMs, long nowMs) {
        this.store = store;
        this.windowMs = windowMs;
        this.rotateAtMs = nowMs + windowMs;
        try (KeyValueIterator<Windowed<String>, Long> it = store.all()) {
            while (it.hasNext() && !overflowed) {
                add(it.next().key.key());
            }
        }
    }

    /** Whether {@code id} was remembered within the window before {@code nowMs}. */
    boolean seen(String id, long nowMs) {
        rotate(nowMs);
        if (!overflowed) {
            long h = hash(id);
            if (!current.contains(h) && !previous.contains(h)) {
                return false;
            }
        }
        try (WindowStoreIterator<Long> seen = store.fetch(id, nowMs - windowMs, Long.MAX_VALUE)) {
            return seen.hasNext();
        }
    }

    /** Writes {@code id} to the store (and its changelog) at {@code nowMs}. */
    void remember(String id, long nowMs) {
        store.put(id, nowMs, nowMs);
        add(id);
    }

    /** Whether the filter answers (false once a generation overflowed: every lookup reads the store). */
    boolean filtering() {
        return !overflowed;
    }

    private void add(String id) {
        if (overflowed) {
            return;
        }
        current.add(hash(id));
        if (current.size() > MAX_IDS) {
            overflowed = true;
            current = new LongSet();
            previous = new LongSet();
        }
    }

    private void rotate(long nowMs) {
        if (nowMs >= rotateAtMs) {
            previous = current;
            current = new LongSet();
            rotateAtMs = nowMs + windowMs;
        }
    }

    /** A 64-bit hash of the id's characters (31-multiplier, then MurmurHash3's finaliser). */
    static long hash(String id) {
        long h = 1125899906842597L;
        for (int i = 0; i < id.length(); i++) {
            h = 31 * h + id.charAt(i);
        }
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }

    /** Open-addressing set of longs (0 stands for an empty slot; the value 0 is stored as 1). */
    static final class LongSet {
        private long[] slots = new long[64];
        private int size;

        boolean contains(long value) {
            long v = value == 0 ? 1 : value;
            int mask = slots.length - 1;
            for (int i = (int) (v ^ (v >>> 32)) & mask; ; i = (i + 1) & mask) {
                long s = slots[i];
                if (s == 0) {
                    return false;
                }
                if (s == v) {
                    return true;
                }
            }
        }

        void add(long value) {
            long v = value == 0 ? 1 : value;
            if ((size + 1) * 2 > slots.length) {
                long[] old = slots;
                slots = new long[old.length * 2];
                size = 0;
                for (long s : old) {
                    if (s != 0) {
                        insert(s);
                    }
                }
            }
            insert(v);
        }

        private void insert(long v) {
            int mask = slots.length - 1;
            for (int i = (int) (v ^ (v >>> 32)) & mask; ; i = (i + 1) & mask) {
                long s = slots[i];
                if (s == v) {
                    return;
                }
                if (s == 0) {
                    slots[i] = v;
                    size++;
                    return;
                }
            }
        }

        int size() {
            return size;
        }
    }
}
