package dev.sluice.sender.telegram;

/** Sends one text message through a provider and classifies the answer. Thread-safe; never throws for provider errors. */
public interface Transport extends AutoCloseable {

    /**
     * @param botId     logical bot id (mapped to a token by the implementation)
     * @param chatId    target chat id as text (numeric, negative for groups, or {@code @channel})
     * @param text      message text, at most 4096 characters
     * @param parseMode optional Telegram parse mode ({@code HTML}, {@code MarkdownV2}, {@code Markdown}), or null
     * @throws IllegalArgumentException when {@code botId} has no configured token
     */
    SendOutcome send(String botId, String chatId, String text, String parseMode);

    @Override
    void close();
}
