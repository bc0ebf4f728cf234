package dev.sluice.topology;

import dev.sluice.avro.Notification;

/**
 * Outcome of reading and validating one source record: either a valid {@link Notification}, or the
 * original value bytes of a record bound for the dead-letter topic (reason in its headers).
 */
public final class Checked {
    private final Notification notification;
    private final byte[] originalValue;

    private Checked(Notification notification, byte[] originalValue) {
        this.notification = notification;
        this.originalValue = originalValue;
    }

    static Checked valid(Notification n) {
        return new Checked(n, null);
    }

    static Checked rejected(byte[] originalValue) {
        return new Checked(null, originalValue);
    }

    public boolean isValid() {
        return notification != null;
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
