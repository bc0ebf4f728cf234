package dev.sluice.sender.idempotency;

/** The idempotency store could not be reached (retriable). */
public final class SentMarksUnavailableException extends RuntimeException {
    public SentMarksUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
