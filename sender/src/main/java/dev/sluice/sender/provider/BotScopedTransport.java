package dev.sluice.sender.provider;

/**
 * A transport that serves only some bot ids (an HTTP provider's configured ids), so a {@link RoutingTransport} can
 * send every other bot to another transport. Thread-safe, as every {@link Transport}.
 */
public interface BotScopedTransport extends Transport {
    /** Whether {@code botId} is sent through this transport. */
    boolean serves(String botId);
}
