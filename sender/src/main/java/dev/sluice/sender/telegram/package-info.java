/**
 * The Telegram Bot API as a {@link dev.sluice.sender.provider.Transport}:
 * {@link dev.sluice.sender.telegram.TelegramTransport} sends through pengrad java-telegram-bot-api and classifies
 * the answer as a {@link dev.sluice.sender.provider.SendOutcome};
 * {@link dev.sluice.sender.telegram.TelegramRequests} maps a message to the one Bot API method it needs. The
 * provider-neutral types live in {@code dev.sluice.sender.provider}.
 */
package dev.sluice.sender.telegram;
