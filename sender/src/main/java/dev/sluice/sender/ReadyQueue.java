package dev.sluice.sender;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * Waiting elements ordered by {@code readyAt} (epoch milliseconds), then by the order they were added: the order of a
 * {@code TreeSet} by {@code (readyAt, sequence number)}, kept as FIFO buckets of one millisecond each in a map by
 * {@code readyAt}. Lanes share a millisecond (lanes enqueued in the same millisecond, the routine lanes aligned to their
 * bot's pacing window), so the map holds fewer keys than the set held lanes, its keys compare as plain longs instead
 * of through a comparator reading two lanes, and an add to the latest-used bucket touches no tree (issue 19: 12,000
 * lanes in red-black trees were ~10 % of a sender's samples). Still the scheduler's largest cost: the map's insertions
 * of new milliseconds (~5 % of a sender's samples under many-bots, session 24); a wheel of near-term slots would
 * remove them.
 *
 * <p>Removal is lazy: {@link #remove} marks the entry and the entry leaves its bucket when it reaches the front, or at a
 * compaction. Bounded: when removed entries outnumber the live ones (and exceed {@link #COMPACT_MIN_REMOVED}), every
 * bucket is swept, so the entries held stay below {@code 2 × live + COMPACT_MIN_REMOVED}; amortised O(1) per removal.
 *
 * <p>Not thread-safe: owned by {@link LaneScheduler}, whose owner guards every call with one lock.
 *
 * @param <E> the element type
 */
final class ReadyQueue<E> {
    /** Removed entries tolerated before a sweep, whatever the live count. */
    static final int COMPACT_MIN_REMOVED = 256;

    /** An element's place in the queue; {@link #remove} takes it back. */
    static final class Entry<E> {
        final E element;
        final long readyAtMs;
        boolean removed;

        private Entry(E element, long readyAtMs) {
            this.element = element;
            this.readyAtMs = readyAtMs;
        }
    }

    private final TreeMap<Long, ArrayDeque<Entry<E>>> buckets = new TreeMap<>();
    /** The bucket of the latest add (still in {@link #buckets}), or null: most adds go to the same millisecond. */
    private ArrayDeque<Entry<E>> lastBucket;
    private long lastKey;
    /** The bucket {@link #peek} found its head in (the first bucket), for {@link #poll}; valid right after a peek. */
    private ArrayDeque<Entry<E>> frontBucket;
    private int live;
    private int removed;

    /** Adds an element behind every element of the same {@code readyAtMs}. */
    Entry<E> add(E element, long readyAtMs) {
        Entry<E> entry = new Entry<>(element, readyAtMs);
        ArrayDeque<Entry<E>> bucket = lastBucket;
        if (bucket == null || lastKey != readyAtMs) {
            bucket = buckets.computeIfAbsent(readyAtMs, k -> new ArrayDeque<>());
            lastBucket = bucket;
            lastKey = readyAtMs;
        }
        bucket.addLast(entry);
        live++;
        return entry;
    }

    /** Takes an entry of this queue back (not yet polled or removed). */
    void remove(Entry<E> entry) {
        entry.removed = true;
        live--;
        removed++;
        if (live == 0) {
            clear();
        } else if (removed > COMPACT_MIN_REMOVED && removed > live) {
            compact();
        }
    }

    /** The first live entry (least readyAt, then the earliest added), or null when none. */
    Entry<E> peek() {
        while (live > 0) {
            Map.Entry<Long, ArrayDeque<Entry<E>>> first = buckets.firstEntry();
            ArrayDeque<Entry<E>> bucket = first.getValue();
            Entry<E> head = bucket.peekFirst();
            if (head == null) {
                dropBucket(first.getKey(), bucket);
            } else if (head.removed) {
                bucket.pollFirst();
                removed--;
            } else {
                frontBucket = bucket;
                return head;
            }
        }
        return null;
    }

    /** Removes and returns the first live element, or null when none. */
    E poll() {
        Entry<E> head = peek();
        if (head == null) {
            return null;
        }
        ArrayDeque<Entry<E>> bucket = frontBucket;
        bucket.pollFirst();
        head.removed = true;
        live--;
        if (bucket.isEmpty()) {
            dropBucket(head.readyAtMs, bucket);
        }
        return head.element;
    }

    boolean isEmpty() {
        return live == 0;
    }

    /** Live elements. */
    int size() {
        return live;
    }

    /** Entries held, live or removed and not yet swept (for the bound's test). */
    int heldEntries() {
        int n = 0;
        for (ArrayDeque<Entry<E>> bucket : buckets.values()) {
            n += bucket.size();
        }
        return n;
    }

    private void dropBucket(long key, ArrayDeque<Entry<E>> bucket) {
        buckets.remove(key);
        if (lastBucket == bucket) {
            lastBucket = null;
        }
    }

    private void clear() {
        buckets.clear();
        lastBucket = null;
        removed = 0;
    }

    private void compact() {
        for (Iterator<ArrayDeque<Entry<E>>> it = buckets.values().iterator(); it.hasNext(); ) {
            ArrayDeque<Entry<E>> bucket = it.next();
            bucket.removeIf(e -> e.removed);
            if (bucket.isEmpty()) {
                it.remove();
                if (lastBucket == bucket) {
                    lastBucket = null;
                }
            }
        }
        removed = 0;
    }
}
