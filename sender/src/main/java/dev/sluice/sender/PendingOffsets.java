package dev.sluice.sender;

import java.util.Arrays;
import java.util.TreeSet;

/**
 * The offsets of one partition that wait for their result. A partition's records arrive in offset order and finish
 * nearly in it, so the set is a dense run: a bitmap over the offsets from the lowest one pending up, one bit per
 * offset spanned (the red-black tree of boxed offsets this replaces cost a node and a boxing per record, and ~6 % of a
 * sender's samples in its removals under many-bots: issue 19).
 *
 * <p>Bound: the bitmap spans at most {@value #MAX_SPAN_OFFSETS} offsets ({@code MAX_SPAN_OFFSETS / 8} bytes = 128 KiB
 * per partition); the words below the lowest pending are reclaimed as it moves up. An offset beyond that span (one
 * record still pending while its partition moved on by a million records, e.g. a chat held by an hour-long penalty)
 * goes to an ordered set of its own, as every offset did before: slower, never wrong.
 *
 * <p>Not thread-safe: owned by {@link OffsetTracker}, which guards every call.
 */
final class PendingOffsets {
    /** The most offsets the bitmap spans (2^20: 16,384 words). */
    static final long MAX_SPAN_OFFSETS = 1L << 20;
    private static final int MAX_WORDS = (int) (MAX_SPAN_OFFSETS >>> 6);
    private static final int INITIAL_WORDS = 16;

    /** Bit {@code i} of {@code words[w]} is offset {@code base + 64 w + i}; no bit below {@code firstWord}. */
    private long[] words = new long[INITIAL_WORDS];
    /** The offset of bit 0 of {@code words[0]}, a multiple of 64; set by the first add to an empty bitmap. */
    private long base;
    private int bits;
    private int firstWord;
    /** Offsets outside the bitmap's span (null until one is). */
    private TreeSet<Long> overflow;

    /** Adds an offset (a no-op if present). */
    void add(long offset) {
        if (overflow != null && !overflow.isEmpty() && overflow.contains(offset)) {
            return;
        }
        if (bits == 0) {
            base = offset & ~63L;
            firstWord = 0;
            if (words.length > INITIAL_WORDS * 4) {
                words = new long[INITIAL_WORDS];
            }
        } else if (offset < base && !growDown(offset)) {
            overflow().add(offset);
            return;
        }
        long index = offset - base;
        if (index >= 64L * words.length && !makeRoomFor(index)) {
            overflow().add(offset);
            return;
        }
        index = offset - base;
        int w = (int) (index >>> 6);
        long bit = 1L << (index & 63);
        if ((words[w] & bit) == 0) {
            words[w] |= bit;
            bits++;
            if (w < firstWord) {
                firstWord = w;
            }
        }
    }

    /** Removes an offset; false if it was not there. */
    boolean remove(long offset) {
        long index = offset - base;
        if (bits > 0 && offset >= base && index < 64L * words.length) {
            int w = (int) (index >>> 6);
            long bit = 1L << (index & 63);
            if ((words[w] & bit) != 0) {
                words[w] &= ~bit;
                bits--;
                return true;
            }
        }
        return overflow != null && overflow.remove(offset);
    }

    boolean isEmpty() {
        return bits == 0 && (overflow == null || overflow.isEmpty());
    }

    int size() {
        return bits + (overflow == null ? 0 : overflow.size());
    }

    /** The lowest offset pending, or -1 when none. */
    long first() {
        return nextAtOrAfter(Long.MIN_VALUE);
    }

    /** The lowest offset pending at or above {@code from}, or -1 when none. */
    long nextAtOrAfter(long from) {
        long inBitmap = bits == 0 ? -1 : nextInBitmap(from);
        if (overflow == null || overflow.isEmpty()) {
            return inBitmap;
        }
        Long other = overflow.ceiling(from);
        if (other == null) {
            return inBitmap;
        }
        return inBitmap < 0 ? other : Math.min(inBitmap, other);
    }

    private long nextInBitmap(long from) {
        while (words[firstWord] == 0) {
            firstWord++;
        }
        int w = firstWord;
        long mask = -1L;
        if (from > base + 64L * w) {
            long index = from - base;
            if (index >= 64L * words.length) {
                return -1;
            }
            w = (int) (index >>> 6);
            mask = -1L << (index & 63);
        }
        for (; w < words.length; w++, mask = -1L) {
            long set = words[w] & mask;
            if (set != 0) {
                return base + 64L * w + Long.numberOfTrailingZeros(set);
            }
        }
        return -1;
    }

    /**
     * {@code index} is past the array: moves the window up past the empty words below the lowest pending, then grows
     * the array within {@link #MAX_WORDS}; false when the offset stays out of span.
     */
    private boolean makeRoomFor(long index) {
        while (words[firstWord] == 0) {
            firstWord++;
        }
        long needed = (index >>> 6) - firstWord + 1;
        if (needed > MAX_WORDS) {
            return false;
        }
        if (firstWord > 0) {
            int keep = words.length - firstWord;
            System.arraycopy(words, firstWord, words, 0, keep);
            Arrays.fill(words, keep, words.length, 0L);
            base += 64L * firstWord;
            firstWord = 0;
        }
        if (needed > words.length) {
            words = Arrays.copyOf(words, (int) Math.min(MAX_WORDS, Math.max(needed, 2L * words.length)));
        }
        return true;
    }

    /** An offset below the window (a record read again below the lowest pending): moves the window down if in span. */
    private boolean growDown(long offset) {
        long newBase = offset & ~63L;
        long shift = (base - newBase) >>> 6;
        int used = words.length;
        while (used > 0 && words[used - 1] == 0) {
            used--;
        }
        if (shift + used > MAX_WORDS) {
            return false;
        }
        long[] grown = new long[(int) Math.max(words.length, shift + used)];
        System.arraycopy(words, 0, grown, (int) shift, used);
        words = grown;
        base = newBase;
        firstWord = 0;
        return true;
    }

    private TreeSet<Long> overflow() {
        if (overflow == null) {
            overflow = new TreeSet<>();
        }
        return overflow;
    }
}
