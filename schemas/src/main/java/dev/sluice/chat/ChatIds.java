package dev.sluice.chat;

import java.util.Locale;

/**
 * The one rule that turns a chat id as a producer wrote it into the id Sluice keys everything by
 * (repartition key, stores, outbox key and {@code chat_id}, budget keys): surrounding whitespace is
 * removed, and a public {@code @username} is lower-cased, because Telegram usernames are
 * case-insensitive (Bot API: "@channelusername"; {@code @MyGroup} and {@code @mygroup} are one chat).
 * Numeric ids and other providers' recipients keep their case. A numeric id and the {@code @username} of
 * the same chat cannot be matched without asking the provider; they stay two keys.
 *
 * <p>Pure and stateless (no thread owns any state); the sender can call the same method.
 */
public final class ChatIds {
    private ChatIds() {
    }

    /**
     * @param chatId a chat id as written by a producer, a sender or a bot backend; may be null
     * @return the normalised id, or null for null
     */
    public static String normalise(String chatId) {
        if (chatId == null) {
            return null;
        }
        String trimmed = chatId.strip();
        return trimmed.startsWith("@") ? trimmed.toLowerCase(Locale.ROOT) : trimmed;
    }

    /** True for a group, supergroup or channel: a negative numeric id or an {@code @username} (after {@link #normalise}). */
    public static boolean isGroupOrChannel(String chatId) {
        String id = normalise(chatId);
        return id != null && (id.startsWith("-") || id.startsWith("@"));
    }
}
