package dev.sluice.testkit;

/**
 * A message {@link FakeTelegram} issued, as it is now ({@link FakeTelegram#message}): {@code method} that sent it,
 * {@code text} (or caption), {@code mediaType} ({@code photo}, {@code document}, ...; null for text) and {@code media}
 * (URL or file_id), {@code replyMarkup} as the JSON sent (null for none), the send options, whether it was deleted, and
 * whether link previews were disabled ({@code link_preview_options.is_disabled} or the older
 * {@code disable_web_page_preview}).
 */
public record FakeTelegramMessage(String botId, String chatId, long messageId, String method, String text, String mediaType,
                                  String media, String replyMarkup, boolean silent, boolean protectContent, Long threadId,
                                  boolean deleted, boolean linkPreviewDisabled) {
    FakeTelegramMessage withText(String newText, String newMarkup) {
        return new FakeTelegramMessage(botId, chatId, messageId, method, newText, mediaType, media, newMarkup, silent,
                protectContent, threadId, deleted, linkPreviewDisabled);
    }

    FakeTelegramMessage withDeleted() {
        return new FakeTelegramMessage(botId, chatId, messageId, method, text, mediaType, media, replyMarkup, silent,
                protectContent, threadId, true, linkPreviewDisabled);
    }
}
