package dev.sluice.sender.provider;

import java.util.Objects;

/**
 * Bot ids the scoped transport serves (the HTTP providers, {@code dev.sluice.sender.http.HttpProviderTransport}) go
 * to it, every other bot id to the fallback (the Telegram transport). Owns and closes both. Thread-safe: no state
 * of its own.
 */
public final class RoutingTransport implements Transport {
    private final BotScopedTransport providers;
    private final Transport fallback;

    public RoutingTransport(BotScopedTransport providers, Transport fallback) {
        this.providers = Objects.requireNonNull(providers, "providers");
        this.fallback = Objects.requireNonNull(fallback, "fallback");
    }

    @Override
    public SendOutcome send(String botId, String chatId, String text, String parseMode) {
        return providers.serves(botId) ? providers.send(botId, chatId, text, parseMode)
                : fallback.send(botId, chatId, text, parseMode);
    }

    /** The message as a whole to the transport that serves the bot (the Telegram one sends its extras). */
    @Override
    public SendOutcome send(String botId, String chatId, dev.sluice.avro.OutboundMessage message) {
        return providers.serves(botId) ? providers.send(botId, chatId, message) : fallback.send(botId, chatId, message);
    }

    @Override
    public void close() {
        try {
            providers.close();
        } finally {
            fallback.close();
        }
    }

    @Override
    public String toString() {
        return "RoutingTransport{" + providers + ", otherwise " + fallback + "}";
    }
}
