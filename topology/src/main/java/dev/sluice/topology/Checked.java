package dev.sluice.topology;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.Notification;

/**
 * Outcome of reading and validating one source record: either a valid {@link Notification}, or the
 * original value bytes of a record bound for the dead-letter topic (reason in its headers), with the FAILED
 * result for its id when the id could be read.
 */
public final class Checked {
    private final Notification notification;
    private final byte[] originalValue;
    private final DeliveryResult deadLetterResult;
    private final boolean onChatPartition;

    private Checked(Notification notification, byte[] originalValue, DeliveryResult deadLetterResult, boolean onChatPartition) {
        this.notification = notification;
        this.originalValue = originalValue;
        this.deadLetterResult = deadLetterResult;
        this.onChatPartition = onChatPartition;
    }

    /** @param onChatPartition keyed by its normalised chat id in that key's partition ({@link ChatKeyedInput}) */
    static Checked valid(Notification n, boolean onChatPartition) {
        return new Checked(n, null, null, onChatPartition);
    }

    /** @param deadLetterResult the FAILED result for the rejected notification's id, or null when no id could be read */
    static Checked rejected(byte[] originalValue, DeliveryResult deadLetterResult) {
        return new Checked(null, originalValue, deadLetterResult, false);
    }

    /** The FAILED result of a rejected record whose notification id could be read; null otherwise. */
    public DeliveryResult deadLetterResult() {
        return deadLetterResult;
    }

    public boolean isValid() {
        return notification != null;
    }

    /** A valid notification that may skip the {@code by-chat} repartition ({@link ChatKeyedInput}). */
    public boolean onChatPartition() {
        return onChatPartition;
    }

    /** The valid notification; null when rejected. */
    public Notification notification() {
        return notification;
    }

    /** The original value bytes of a rejected record (may be null for a tombstone). */
    public byte[] originalValue() {
        return originalValue;
    }
}
