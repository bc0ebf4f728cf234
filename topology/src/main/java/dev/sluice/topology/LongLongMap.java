package dev.sluice.topology;

/**
 * Open-addressing map of long keys to long values (key 0 is stored as 1; a value is never {@code Long.MIN_VALUE}). Not
 * thread-safe: used by its owner's thread only ({@link SeenIds}: a task's stream thread).
 */
final class LongLongMap {
    /** What {@link #get} answers for a key it does not hold. */
    static final long ABSENT = Long.MIN_VALUE;

    private long[] keys = new long[64];
    private long[] values = new long[64];
    private int size;

    /** The value of {@code key}, or {@code Long.MIN_VALUE}. */
    long get(long key) {
        long k = key == 0 ? 1 : key;
        int mask = keys.length - 1;
        for (int i = (int) (k ^ (k >>> 32)) & mask; ; i = (i + 1) & mask) {
            long s = keys[i];
            if (s == 0) {
                return ABSENT;
            }
            if (s == k) {
                return values[i];
            }
        }
    }

    void put(long key, long value) {
        if ((size + 1) * 2 > keys.length) {
            long[] oldKeys = keys;
            long[] oldValues = values;
            keys = new long[oldKeys.length * 2];
            values = new long[oldKeys.length * 2];
            size = 0;
            for (int i = 0; i < oldKeys.length; i++) {
                if (oldKeys[i] != 0) {
                    insert(oldKeys[i], oldValues[i]);
                }
            }
        }
        insert(key == 0 ? 1 : key, value);
    }

    private void insert(long k, long value) {
        int mask = keys.length - 1;
        for (int i = (int) (k ^ (k >>> 32)) & mask; ; i = (i + 1) & mask) {
            long s = keys[i];
            if (s == k || s == 0) {
                if (s == 0) {
                    size++;
                }
                keys[i] = k;
                values[i] = value;
                return;
            }
        }
    }

    int size() {
        return size;
    }
}
