/**
 * What the sender needs of a provider, whichever it is (Telegram, an HTTP provider): no class here knows the
 * sender's scheduling, budget or Kafka sides, and nothing here imports them.
 *
 * <ul>
 * <li>{@link dev.sluice.sender.provider.Transport}: sends one message for a bot id and classifies the answer as a
 *     {@link dev.sluice.sender.provider.SendOutcome} (delivered, retry_after, blocked, migrated, permanent or
 *     transient failure).</li>
 * <li>{@link dev.sluice.sender.provider.RoutingTransport}: the bot ids a
 *     {@link dev.sluice.sender.provider.BotScopedTransport} serves (the HTTP providers) to it, every other bot id to
 *     the fallback (Telegram).</li>
 * <li>{@link dev.sluice.sender.provider.BotToken}: a bot's secret, never shown by {@code toString}, and the
 *     redaction of this secret and of token-shaped text in provider answers (by {@code dev.sluice.config.TokenRedaction}).</li>
 * </ul>
 * Implementations: {@code dev.sluice.sender.telegram.TelegramTransport},
 * {@code dev.sluice.sender.http.HttpProviderTransport}.
 */
package dev.sluice.sender.provider;
