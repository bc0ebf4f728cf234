package dev.sluice.sender.provider;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A bot's secret: a Telegram bot token, or an HTTP provider's API key. {@link #toString()} never shows it; only the
 * transport calls {@link #reveal()} to build the request. Use {@link #redact(String)} on any text that may
 * contain it (exception messages with the request URL). Immutable.
 */
public final class BotToken {
    /** Telegram token shape: {@code <numeric bot id>:<35 url-safe chars>}; matched loosely. */
    private static final Pattern TOKEN_SHAPE = Pattern.compile("\\d{3,}:[A-Za-z0-9_-]{10,}");
    private final String value;

    public BotToken(String value) {
        this.value = Objects.requireNonNull(value, "token");
    }

    /** The secret value. Callers must not log, store or publish it. */
    public String reveal() {
        return value;
    }

    /** Replaces this token and anything shaped like a Telegram token in {@code text}. */
    public String redact(String text) {
        if (text == null) {
            return null;
        }
        return redactAny(text.replace(value, "[redacted]"));
    }

    /** Replaces anything shaped like a Telegram token in {@code text}. */
    public static String redactAny(String text) {
        return text == null ? null : TOKEN_SHAPE.matcher(text).replaceAll("[redacted]");
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
        return "[redacted]";
    }
}
