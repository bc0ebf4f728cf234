package dev.sluice.sender.budget;

/**
 * A bot's keys and fixed acquire arguments, encoded once ({@link AcquireCall#botArgs}), and whether its routine
 * requests were last held to the routine horizon (written by any calling thread after its reply, read by any:
 * volatile, last reply wins).
 */
final class BotArgs {
    final byte[] botKey;
    final byte[] chatPrefix;
    final byte[] groupPrefix;
    final byte[] sentPrefix;
    final byte[] arrivalsKey;
    /** {@code sluice:{bot}:critical}; null with a critical memory of 0 (the script then reads no key). */
    final byte[] criticalKey;
    /** {@code sluice:{bot}:probe}; null with a penalty probe window of 0 (the script then reads no key). */
    final byte[] probeKey;
    final byte[][] fixed;
    final java.util.concurrent.atomic.AtomicLong seenEpoch = new java.util.concurrent.atomic.AtomicLong();
    volatile boolean routineShort = true;

    BotArgs(byte[] botKey, byte[] chatPrefix, byte[] groupPrefix, byte[] sentPrefix, byte[] arrivalsKey,
            byte[] criticalKey, byte[] probeKey, byte[][] fixed) {
        this.botKey = botKey;
        this.chatPrefix = chatPrefix;
        this.groupPrefix = groupPrefix;
        this.sentPrefix = sentPrefix;
        this.arrivalsKey = arrivalsKey;
        this.criticalKey = criticalKey;
        this.probeKey = probeKey;
        this.fixed = fixed;
    }
}
