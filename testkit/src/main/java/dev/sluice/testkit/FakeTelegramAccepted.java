package dev.sluice.testkit;

/**
 * A call {@link FakeTelegram} accepted (answered 200); see {@link FakeTelegram#accepted()}.
 *
 * @param botId the token's id part (before {@code ':'}); never the token
 * @param chatId the chat id as sent, normalised (numeric ids without sign/space noise, or {@code @username})
 * @param text the text or caption sent (empty for a delete or a markup edit)
 * @param acceptedAtMillis the fake's clock when it accepted, epoch ms
 * @param messageId the message id issued (increasing per chat from 1), or for an edit or delete the id it acted on
 * @param method the method as Telegram spells it
 */
public record FakeTelegramAccepted(String botId, String chatId, String text, long acceptedAtMillis, long messageId,
                                   String method) {
}
