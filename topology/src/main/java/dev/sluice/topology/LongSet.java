package dev.sluice.topology;

/**
 * Open-addressing set of longs (0 stands for an empty slot; the value 0 is stored as 1). Not thread-safe: its owner
 * confines it to one thread or guards it ({@link SeenIds}, {@link ChatStatusKeys}, {@link PreferenceKeys}).
 */
final class LongSet {
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
