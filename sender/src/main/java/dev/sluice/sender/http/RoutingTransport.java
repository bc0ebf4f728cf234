package dev.sluice.sender.http;

import dev.sluice.sender.telegram.SendOutcome;
import dev.sluice.sender.telegram.Transport;
import java.util.Objects;

/**
 * Bot ids configured as HTTP providers go to the {@link HttpProviderTransport}, every other bot id to the
 * fallback (the Telegram transport). Owns and closes both.
 */
public final class RoutingTransport implements Transport {
    private final HttpProviderTransport providers;
    private final Transport fallback;

    public RoutingTransport(HttpProviderTransport providers, Transport fallback) {
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
