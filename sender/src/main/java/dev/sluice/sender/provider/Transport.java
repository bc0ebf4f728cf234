package dev.sluice.sender.provider;

import dev.sluice.avro.OutboundMessage;

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

    /**
     * Sends, edits or deletes as {@code message} asks (issue 20: media, inline keyboard, silence, forum topic, edits and
     * deletes). A provider without these sends the text alone and refuses edits and deletes as a permanent failure.
     *
     * @param chatId the chat to call (the sender's resolved target)
     * @throws IllegalArgumentException when {@code botId} has no configured token
     */
    default SendOutcome send(String botId, String chatId, OutboundMessage message) {
        if (message.getEditOf() != null || message.getDeleteOf() != null) {
            return new SendOutcome.PermanentFailure(400, "this provider does not edit or delete messages ("
                    + (message.getEditOf() != null ? "edit_of " + message.getEditOf() : "delete_of " + message.getDeleteOf()) + ")");
        }
        return send(botId, chatId, message.getText(), message.getParseMode());
    }

    @Override
    void close();
}
