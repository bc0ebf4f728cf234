package dev.sluice.sender;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * Waiting elements ordered by {@code readyAt} (epoch milliseconds), then by the order they were added: the order of a
 * {@code TreeSet} by {@code (readyAt, sequence number)}, kept as FIFO buckets of one millisecond each.
 *
 * <p><b>Where the buckets are.</b> With a wheel ({@code wheelSlots > 0}), the buckets of the near term are slots of an
 * array indexed by {@code readyAt mod wheelSlots}, with a bitmap of the occupied slots: as long as the readyAt values
 * held in the wheel span fewer than {@code wheelSlots} milliseconds, each slot holds one readyAt, and a scan of the
 * bitmap from the lowest readyAt meets them in order. An add whose readyAt would stretch that span (a 429's
 * retry_after, a gate) goes to a map by readyAt instead ("beyond"). Under many-bots the map alone, one insertion per
 * new millisecond (a rescheduled lane's readyAt is its own reservation slot), was the scheduler's largest cost (~5 % of
 * a sender's samples, session 24); the TreeSets before it, with one node per lane and a comparator reading two lanes,
 * ~10 %. Without a wheel (the per-bot queues: one array per bot would cost memory per bot) only the map is used.
 *
 * <p><b>Ties.</b> Entries of one readyAt may be in both places: those in the map were added while the readyAt did not
 * fit the wheel, so before any in the wheel (while the wheel holds a readyAt, it fits); the map's go first.
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
    /** The wheel of the scheduler's two main queues: about a second, past the longest reservation horizon (500 ms). */
    static final int MAIN_WHEEL_SLOTS = 1024;

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

    /** Slot {@code readyAt & mask}: the entries of one readyAt, FIFO (allocated on first use, kept). */
    private final ArrayDeque<Entry<E>>[] slots;
    private final int mask;
    /** Bit {@code s} set: slot {@code s} holds an entry (live or removed). */
    private final long[] occupied;
    /** Entries in the wheel, live or removed. */
    private int wheelHeld;
    /** No entry in the wheel has a readyAt below this or above {@code wheelHigh} (spanning < slots.length). */
    private long wheelLow;
    private long wheelHigh;

    private final TreeMap<Long, ArrayDeque<Entry<E>>> beyond = new TreeMap<>();
    /** The map's bucket of the latest add (still in the map), or null. */
    private ArrayDeque<Entry<E>> lastBucket;
    private long lastKey;

    /** Where {@link #peek} found the front, for {@link #poll}: a slot ({@code frontSlot >= 0}) or a map bucket. */
    private int frontSlot;
    private ArrayDeque<Entry<E>> frontBucket;
    private int live;
    private int removed;

    /** A queue with the main queues' wheel. */
    ReadyQueue() {
        this(MAIN_WHEEL_SLOTS);
    }

    /** @param wheelSlots 0 (the map only) or a power of two of at least 64 */
    @SuppressWarnings("unchecked")
    ReadyQueue(int wheelSlots) {
        if (wheelSlots != 0 && (wheelSlots < 64 || Integer.bitCount(wheelSlots) != 1)) {
            throw new IllegalArgumentException("wheelSlots must be 0 or a power of two >= 64: " + wheelSlots);
        }
        this.slots = new ArrayDeque[wheelSlots];
        this.mask = wheelSlots - 1;
        this.occupied = new long[wheelSlots / 64];
    }

    /** Adds an element behind every element of the same {@code readyAtMs}. */
    Entry<E> add(E element, long readyAtMs) {
        Entry<E> entry = new Entry<>(element, readyAtMs);
        live++;
        if (slots.length > 0) {
            if (wheelHeld == 0) {
                wheelLow = readyAtMs;
                wheelHigh = readyAtMs;
            }
            long low = Math.min(wheelLow, readyAtMs);
            long high = Math.max(wheelHigh, readyAtMs);
            if (high - low < slots.length) {
                wheelLow = low;
                wheelHigh = high;
                int s = (int) (readyAtMs & mask);
                ArrayDeque<Entry<E>> slot = slots[s];
                if (slot == null) {
                    slot = new ArrayDeque<>();
                    slots[s] = slot;
                }
                if (slot.isEmpty()) {
                    occupied[s >>> 6] |= 1L << s;
                }
                slot.addLast(entry);
                wheelHeld++;
                return entry;
            }
        }
        ArrayDeque<Entry<E>> bucket = lastBucket;
        if (bucket == null || lastKey != readyAtMs) {
            bucket = beyond.computeIfAbsent(readyAtMs, k -> new ArrayDeque<>());
            lastBucket = bucket;
            lastKey = readyAtMs;
        }
        bucket.addLast(entry);
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
        if (live == 0) {
            return null;
        }
        Entry<E> inWheel = wheelHeld == 0 ? null : wheelFront(); // sets frontSlot
        Entry<E> inMap = beyond.isEmpty() ? null : mapFront(); // sets frontBucket
        if (inMap != null && (inWheel == null || inMap.readyAtMs <= inWheel.readyAtMs)) {
            frontSlot = -1;
            return inMap;
        }
        return inWheel;
    }

    /** Removes and returns the first live element, or null when none. */
    E poll() {
        Entry<E> head = peek();
        if (head == null) {
            return null;
        }
        if (frontSlot >= 0) {
            ArrayDeque<Entry<E>> slot = slots[frontSlot];
            slot.pollFirst();
            wheelHeld--;
            if (slot.isEmpty()) {
                occupied[frontSlot >>> 6] &= ~(1L << frontSlot);
            }
        } else {
            frontBucket.pollFirst();
            if (frontBucket.isEmpty()) {
                dropBucket(head.readyAtMs, frontBucket);
            }
        }
        head.removed = true;
        if (--live == 0) {
            clear(); // removed entries behind it, anywhere: nothing held when nothing is live
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
        int n = wheelHeld;
        for (ArrayDeque<Entry<E>> bucket : beyond.values()) {
            n += bucket.size();
        }
        return n;
    }

    /** The wheel's first live entry (dropping removed ones met on the way), its slot in frontSlot; null if none. */
    private Entry<E> wheelFront() {
        while (wheelHeld > 0) {
            int s = nextOccupied((int) (wheelLow & mask));
            ArrayDeque<Entry<E>> slot = slots[s];
            Entry<E> head = slot.peekFirst();
            if (head.removed) {
                slot.pollFirst();
                removed--;
                wheelHeld--;
                if (slot.isEmpty()) {
                    occupied[s >>> 6] &= ~(1L << s);
                }
            } else {
                wheelLow = head.readyAtMs; // the slots from the old low up to s hold nothing
                frontSlot = s;
                return head;
            }
        }
        return null;
    }

    /** The first occupied slot at or after {@code from}, in circular order (one exists: wheelHeld > 0). */
    private int nextOccupied(int from) {
        int w = from >>> 6;
        long bits = occupied[w] & (-1L << (from & 63));
        for (int n = 0; n <= occupied.length; n++) {
            if (bits != 0) {
                return (w << 6) + Long.numberOfTrailingZeros(bits);
            }
            w = (w + 1) % occupied.length;
            bits = occupied[w];
        }
        throw new IllegalStateException("wheel holds " + wheelHeld + " entries but no slot is occupied");
    }

    /** The map's first live entry (dropping removed ones and empty buckets), its bucket in frontBucket; null if none. */
    private Entry<E> mapFront() {
        while (!beyond.isEmpty()) {
            Map.Entry<Long, ArrayDeque<Entry<E>>> first = beyond.firstEntry();
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

    private void dropBucket(long key, ArrayDeque<Entry<E>> bucket) {
        beyond.remove(key);
        if (lastBucket == bucket) {
            lastBucket = null;
        }
    }

    private void clear() {
        for (int w = 0; w < occupied.length; w++) {
            for (long bits = occupied[w]; bits != 0; bits &= bits - 1) {
                slots[(w << 6) + Long.numberOfTrailingZeros(bits)].clear();
            }
            occupied[w] = 0;
        }
        wheelHeld = 0;
        beyond.clear();
        lastBucket = null;
        removed = 0;
    }

    private void compact() {
        for (int w = 0; w < occupied.length; w++) {
            for (long bits = occupied[w]; bits != 0; bits &= bits - 1) {
                int s = (w << 6) + Long.numberOfTrailingZeros(bits);
                ArrayDeque<Entry<E>> slot = slots[s];
                int before = slot.size();
                slot.removeIf(e -> e.removed);
                wheelHeld -= before - slot.size();
                if (slot.isEmpty()) {
                    occupied[w] &= ~(1L << s);
                }
            }
        }
        for (Iterator<ArrayDeque<Entry<E>>> it = beyond.values().iterator(); it.hasNext(); ) {
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
