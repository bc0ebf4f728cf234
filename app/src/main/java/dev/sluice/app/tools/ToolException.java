package dev.sluice.app.tools;

/**
 * A CLI tool cannot start or go on (Kafka or the schema registry unreachable, a topic missing). Its message is
 * the one line the user sees: it names the address or the key, never a secret. Thrown and caught on the
 * command's own thread.
 */
public final class ToolException extends RuntimeException {
    public ToolException(String message) {
        super(message);
    }

    public ToolException(String message, Throwable cause) {
        super(message, cause);
    }
}
