package dev.sluice.topology;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * The ids a lane's task saw within {@code dedupe.window.ms} (issue 21): a filter in memory, with what a restart restores in
 * two window stores.
 *
 * <p><b>Batch mode</b> (while the window's ids fit in memory): each id is appended to an open <i>batch</i>, a record of
 * {@code <lane>-dedupe-batches} (key = a task-local sequence, timestamp = the batch's first id, value = the ids with each
 * one's offset in ms, {@link #decode}). That store has Kafka Streams' record cache on, so the batch rewritten per id is
 * coalesced in the cache and reaches RocksDB and the changelog once per commit: Kafka Streams flushes the caches of a
 * task's stores before it flushes the producer and commits the transaction ({@code StreamTask.prepareCommit} →
 * {@code ProcessorStateManager.flushCache}), or earlier when the cache evicts it; either way inside the transaction that
 * commits the input. So the changelog holds every id remembered before the last commit, as the per-id store did, in one
 * record per batch instead of one per id. A batch takes ids for at most {@value #BATCH_SPAN_MS} ms and
 * {@value #BATCH_MAX_BYTES} bytes (each put copies it into the cache); the store's retention is the window plus that span.
 * The filter maps a 64-bit hash of each id to the batch that holds it: an id whose hash is absent was not seen (no store
 * read); a present hash is confirmed by reading that batch (or, for an id the previous version wrote, the per-id store).
 * An id whose hash is already in the filter (another id with the same hash, or the same id again after the window) is
 * still written to the open batch, and kept in a small exact map beside the filter.
 *
 * <p><b>Per-id mode</b>: {@code <lane>-dedupe-store} (a window store, id → time, retention = the window) is the previous
 * version's store, kept registered with the same name and shape: at init its ids are loaded (so an id the previous version
 * remembered is still a duplicate within the window), and it is written only in per-id mode. When a generation of the filter
 * would hold more than {@code maxIds} ids, every live id of the batches is copied into it (once, in the stream thread)
 * and from then on every id is written there and every lookup reads it, as before issue 21's batches, until the processor is
 * initialised again; so memory stays bounded at any rate. An overflow found while loading at init is migrated at the first
 * lookup (stores are written only while a record is processed).
 *
 * <p>Two generations: a hash stays in the current one until the next rotation and in the previous one until the rotation
 * after, and rotations are at least {@code dedupe.window.ms} apart, so a hash stays at least the window. The ids are
 * opaque keys here ({@link RouteDedupe} makes them); loading notes until when an id of a previous key format is within the
 * window ({@link #legacyUntilMs}). One instance per processor, used by its task's stream thread only.
 */
final class SeenIds {
    /** Ids one generation holds before the filter gives up (per-id mode). */
    static final int MAX_IDS = 1 << 18;
    /** A batch takes ids for at most this long after its first id; the batch store's retention is the window plus this. */
    static final long BATCH_SPAN_MS = 60_000;
    /** A batch's value is closed once it holds this many bytes. */
    static final int BATCH_MAX_BYTES = 4_096;
    private static final long ABSENT = LongLongMap.ABSENT;
    /** Location of an id loaded from the per-id store. */
    private static final long PER_ID = -1;

    private final WindowStore<String, Long> ids;
    private final WindowStore<Long, byte[]> batches;
    private final long windowMs;
    private final int maxIds;
    /** Until when an id of the previous key format loaded at init may still be a duplicate ({@link #legacyUntilMs}). */
    private long legacyUntilMs;
    private LongLongMap current = new LongLongMap();
    private LongLongMap previous = new LongLongMap();
    /** Ids (→ time) whose hash's slot in {@link #current} points elsewhere; counted against {@link #maxIds}. */
    private final Map<String, Long> extra = new HashMap<>();
    private long rotateAtMs;
    private boolean perId;
    private boolean migrateAtFirstUse;
    private long nextSeq;
    private long openSeq = -1;
    private long openStartMs;
    private byte[] open = new byte[256];
    private int openLength;

    /**
     * The lane's two stores of this task ({@code <lane>-dedupe-store}, {@code <lane>-dedupe-batches}), batching only when
     * the record cache is on ({@link #recordCacheOn}).
     */
    static SeenIds open(org.apache.kafka.streams.processor.api.ProcessorContext<?, ?> context, LaneSpec spec, long windowMs,
                        Predicate<String> legacy) {
        return new SeenIds(context.getStateStore(SluiceTopology.dedupeStore(spec)),
                context.getStateStore(SluiceTopology.dedupeBatchStore(spec)), windowMs, context.currentSystemTimeMs(), MAX_IDS,
                recordCacheOn(context.appConfigs()), legacy);
    }

    /** Reads the ids both stores hold (a previous run's, restored). */
    SeenIds(WindowStore<String, Long> ids, WindowStore<Long, byte[]> batches, long windowMs, long nowMs) {
        this(ids, batches, windowMs, nowMs, MAX_IDS);
    }

    SeenIds(WindowStore<String, Long> ids, WindowStore<Long, byte[]> batches, long windowMs, long nowMs, int maxIds) {
        this(ids, batches, windowMs, nowMs, maxIds, true);
    }

    /**
     * @param batching false when the record cache is off ({@link #recordCacheOn}): every batch put would reach RocksDB and
     *     the changelog at once, rewriting its whole batch per id, so it starts in per-id mode (the batches' ids are
     *     copied into the per-id store at the first lookup, as after an overflow)
     */
    SeenIds(WindowStore<String, Long> ids, WindowStore<Long, byte[]> batches, long windowMs, long nowMs, int maxIds,
            boolean batching) {
        this(ids, batches, windowMs, nowMs, maxIds, batching, id -> false);
    }

    /**
     * @param legacy which stored ids have the previous version's key format: {@link #legacyUntilMs} is the latest time
     *     such an id loaded at init is still within the window
     */
    SeenIds(WindowStore<String, Long> ids, WindowStore<Long, byte[]> batches, long windowMs, long nowMs, int maxIds,
            boolean batching, Predicate<String> legacy) {
        this.ids = ids;
        this.batches = batches;
        this.windowMs = windowMs;
        this.maxIds = maxIds;
        this.rotateAtMs = nowMs + windowMs;
        this.legacyUntilMs = Long.MIN_VALUE;
        try (KeyValueIterator<Windowed<String>, Long> it = ids.all()) {
            while (it.hasNext() && !migrateAtFirstUse) {
                KeyValue<Windowed<String>, Long> kv = it.next();
                noteLegacy(legacy, kv.key.key(), kv.key.window().start());
                load(kv.key.key(), PER_ID, kv.key.window().start());
            }
        }
        long oldest = nowMs - windowMs;
        try (KeyValueIterator<Windowed<Long>, byte[]> it = batches.all()) {
            while (it.hasNext()) {
                KeyValue<Windowed<Long>, byte[]> kv = it.next();
                long seq = kv.key.key();
                nextSeq = Math.max(nextSeq, seq + 1);
                if (!migrateAtFirstUse) {
                    decode(kv.value, kv.key.window().start(), (id, t) -> {
                        if (t >= oldest) {
                            noteLegacy(legacy, id, t);
                            load(id, seq, t);
                        }
                    });
                }
            }
        }
        if (!batching) {
            migrateAtFirstUse = true;
            current = new LongLongMap();
            previous = new LongLongMap();
            extra.clear();
        }
    }

    /**
     * Whether Kafka Streams' record cache is on for these application configs ({@code ProcessorContext.appConfigs()}:
     * originals over defaults): neither {@code statestore.cache.max.bytes} nor the deprecated
     * {@code cache.max.bytes.buffering} is 0.
     */
    static boolean recordCacheOn(java.util.Map<String, Object> appConfigs) {
        for (String key : new String[] {"statestore.cache.max.bytes", "cache.max.bytes.buffering"}) {
            Object v = appConfigs.get(key);
            if (v != null && Long.parseLong(v.toString().trim()) <= 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Until when (exclusive) an id of the previous key format ({@code legacy} of the constructor) may be found: the
     * latest time of such an id loaded at init plus the window; when loading stopped at an overflow (the rest unread), the
     * window from init. Long.MIN_VALUE when none was loaded.
     */
    long legacyUntilMs() {
        return legacyUntilMs;
    }

    private void noteLegacy(Predicate<String> legacy, String id, long t) {
        if (legacyUntilMs < t + windowMs && legacy.test(id)) {
            legacyUntilMs = t + windowMs;
        }
    }

    /** Whether {@code id} was remembered within the window before {@code nowMs}. */
    boolean seen(String id, long nowMs) {
        rotate(nowMs);
        if (migrateAtFirstUse) {
            toPerId(nowMs);
        }
        if (perId) {
            return inPerIdStore(id, nowMs);
        }
        long h = hash(id);
        long inCurrent = current.get(h);
        long inPrevious = previous.get(h);
        if (inCurrent == ABSENT && inPrevious == ABSENT) {
            return false;
        }
        byte[] utf8 = id.getBytes(StandardCharsets.UTF_8);
        if (inBatch(inCurrent, utf8, nowMs) || inBatch(inPrevious, utf8, nowMs)) {
            return true;
        }
        Long t = extra.get(id);
        if (t != null && t >= nowMs - windowMs) {
            return true;
        }
        return (inCurrent == PER_ID || inPrevious == PER_ID) && inPerIdStore(id, nowMs);
    }

    /** Remembers {@code id} at {@code nowMs}: in the open batch (batch mode) or the per-id store. */
    void remember(String id, long nowMs) {
        rotate(nowMs);
        if (migrateAtFirstUse) {
            toPerId(nowMs);
        }
        if (perId) {
            ids.put(id, nowMs, nowMs);
            return;
        }
        append(id.getBytes(StandardCharsets.UTF_8), nowMs);
        batches.put(openSeq, Arrays.copyOf(open, openLength), openStartMs);
        long h = hash(id);
        if (current.get(h) == ABSENT) {
            current.put(h, openSeq);
        } else {
            extra.put(id, nowMs);
        }
        if (current.size() + extra.size() > maxIds) {
            toPerId(nowMs);
        }
    }

    /** Whether the filter answers (false in per-id mode: every lookup reads the per-id store). */
    boolean filtering() {
        return !perId && !migrateAtFirstUse;
    }

    /** At init: an id of a store (time {@code t}) into the current generation. */
    private void load(String id, long location, long t) {
        if (migrateAtFirstUse) {
            return;
        }
        long h = hash(id);
        long there = current.get(h);
        if (there == ABSENT) {
            current.put(h, location);
        } else if (there != location && location != PER_ID) {
            // another id with this hash holds the slot; a per-id store id is found there anyway (PER_ID lookups read it)
            extra.merge(id, t, Math::max);
        }
        if (current.size() + extra.size() > maxIds) {
            migrateAtFirstUse = true;
            legacyUntilMs = Math.max(legacyUntilMs, rotateAtMs); // the ids not read yet may hold some: the window from init
            current = new LongLongMap();
            previous = new LongLongMap();
            extra.clear();
        }
    }

    private boolean inPerIdStore(String id, long nowMs) {
        try (WindowStoreIterator<Long> seen = ids.fetch(id, nowMs - windowMs, Long.MAX_VALUE)) {
            return seen.hasNext();
        }
    }

    private boolean inBatch(long seq, byte[] utf8, long nowMs) {
        if (seq < 0) {
            return false;
        }
        long oldest = nowMs - windowMs;
        boolean[] found = {false};
        try (WindowStoreIterator<byte[]> it = batches.fetch(seq, oldest - BATCH_SPAN_MS, Long.MAX_VALUE)) {
            while (it.hasNext() && !found[0]) {
                KeyValue<Long, byte[]> kv = it.next();
                decodeRaw(kv.value, kv.key, (value, from, to, t) -> {
                    if (t >= oldest && Arrays.equals(value, from, to, utf8, 0, utf8.length)) {
                        found[0] = true;
                    }
                });
            }
        }
        return found[0];
    }

    /** Appends an id to the open batch, first opening a new one when it is full, too old, or the clock went back. */
    private void append(byte[] utf8, long nowMs) {
        if (openSeq < 0 || openLength >= BATCH_MAX_BYTES || nowMs - openStartMs >= BATCH_SPAN_MS || nowMs < openStartMs) {
            openSeq = nextSeq++;
            openStartMs = nowMs;
            openLength = 0;
        }
        int need = openLength + 10 + utf8.length;
        if (need > open.length) {
            open = Arrays.copyOf(open, Math.max(need, open.length * 2));
        }
        openLength = writeVarint(open, openLength, utf8.length);
        openLength = writeVarint(open, openLength, (int) (nowMs - openStartMs));
        System.arraycopy(utf8, 0, open, openLength, utf8.length);
        openLength += utf8.length;
    }

    /** Copies every live id of the batches (and the exact map) into the per-id store; from then on per-id mode. */
    private void toPerId(long nowMs) {
        long oldest = nowMs - windowMs;
        try (KeyValueIterator<Windowed<Long>, byte[]> it = batches.all()) {
            while (it.hasNext()) {
                KeyValue<Windowed<Long>, byte[]> kv = it.next();
                decode(kv.value, kv.key.window().start(), (id, t) -> {
                    if (t >= oldest) {
                        ids.put(id, t, t);
                    }
                });
            }
        }
        extra.forEach((id, t) -> {
            if (t >= oldest) {
                ids.put(id, t, t);
            }
        });
        perId = true;
        migrateAtFirstUse = false;
        current = new LongLongMap();
        previous = new LongLongMap();
        extra.clear();
    }

    private void rotate(long nowMs) {
        if (nowMs >= rotateAtMs) {
            previous = current;
            current = new LongLongMap();
            rotateAtMs = nowMs + windowMs;
            extra.values().removeIf(t -> t < nowMs - windowMs);
        }
    }

    /** Receives the ids of a batch with their times. */
    interface IdSink {
        void id(String id, long timeMs);
    }

    private interface RawSink {
        void id(byte[] value, int from, int to, long timeMs);
    }

    /**
     * A batch's value: per id, its UTF-8 length and its offset in ms from the batch's timestamp (unsigned varints), then its
     * UTF-8 bytes.
     */
    static void decode(byte[] value, long batchStartMs, IdSink sink) {
        decodeRaw(value, batchStartMs, (v, from, to, t) -> sink.id(new String(v, from, to - from, StandardCharsets.UTF_8), t));
    }

    private static void decodeRaw(byte[] value, long batchStartMs, RawSink sink) {
        int[] pos = {0};
        while (pos[0] < value.length) {
            int length = readVarint(value, pos);
            long t = batchStartMs + readVarint(value, pos);
            sink.id(value, pos[0], pos[0] + length, t);
            pos[0] += length;
        }
    }

    private static int writeVarint(byte[] out, int at, int value) {
        int v = value;
        while ((v & ~0x7F) != 0) {
            out[at++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        out[at++] = (byte) v;
        return at;
    }

    private static int readVarint(byte[] in, int[] pos) {
        int value = 0;
        for (int shift = 0; ; shift += 7) {
            byte b = in[pos[0]++];
            value |= (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return value;
            }
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
}
