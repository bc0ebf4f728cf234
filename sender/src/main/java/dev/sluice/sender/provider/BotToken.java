package dev.sluice.sender.provider;

import dev.sluice.config.TokenRedaction;
import java.util.Objects;

/**
 * A bot's secret: a Telegram bot token, or an HTTP provider's API key. {@link #toString()} never shows it; only the
 * transport calls {@link #reveal()} to build the request. Use {@link #redact(String)} on any text that may
 * contain it (exception messages with the request URL); the redaction itself is {@link TokenRedaction}'s, the one
 * for the whole project. Immutable, so any thread may use it.
 */
public final class BotToken {
    private final String value;

    public BotToken(String value) {
        this.value = Objects.requireNonNull(value, "token");
    }

    /** The secret value. Callers must not log, store or publish it. */
    public String reveal() {
        return value;
    }

    /**
     * Replaces this token (also percent-encoded or JSON-escaped, as it is filled into a request) and anything shaped
     * like a Telegram token in {@code text}: {@link TokenRedaction#redact(String, String)}.
     */
    public String redact(String text) {
        return TokenRedaction.redact(text, value);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BotToken t && t.value.equals(value);
    }

    @Override
    public int hashCode() {
        return value.hashCode();
    }

    @Override
    public String toString() {
        return TokenRedaction.REDACTED;
    }
}
