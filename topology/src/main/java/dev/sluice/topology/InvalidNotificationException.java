package dev.sluice.topology;

/**
 * A notification that was read but breaks a rule (missing chat id, text too long, ...). The message
 * names the field and the offending value; the record goes to the dead-letter topic.
 */
public final class InvalidNotificationException extends RuntimeException {
    private final String field;

    public InvalidNotificationException(String field, String message) {
        super(message);
        this.field = field;
    }

    /** The Avro field at fault, e.g. {@code chat_id}. */
    public String field() {
        return field;
    }
}
