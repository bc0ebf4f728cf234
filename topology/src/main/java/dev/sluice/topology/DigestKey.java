package dev.sluice.topology;

import dev.sluice.avro.Notification;

/**
 * The key of a digest entry (DESIGN.md, ROUTINE: folded by key): chat, bot, kind and entity, encoded
 * without ambiguity as length-prefixed parts, e.g. {@code 2:42|6:alerts|13:task.assigned|7:task-42}
 * ({@code -} for a missing entity). Readable in the changelog, and the chat part keeps all keys of one chat
 * together in the store's order.
 */
final class DigestKey {
    private DigestKey() {
    }

    /** The key of {@code n} addressed to {@code chatId} (the chat after any migration). */
    static String of(Notification n, String chatId) {
        StringBuilder s = new StringBuilder();
        part(s, chatId);
        s.append('|');
        part(s, n.getBotId());
        s.append('|');
        part(s, n.getKind());
        s.append('|');
        if (n.getEntity() == null) {
            s.append('-');
        } else {
            part(s, n.getEntity());
        }
        return s.toString();
    }

    /** The chat part of a key made by {@link #of} (the first length-prefixed part). */
    static String chatOf(String key) {
        int colon = key.indexOf(':');
        int start = colon + 1;
        return key.substring(start, start + Integer.parseInt(key, 0, colon, 10));
    }

    /** The chat and bot parts of a key made by {@link #of}, as {@link #chatAndBot} builds them. */
    static String chatAndBotOf(String key) {
        int colon = key.indexOf(':');
        int chatEnd = colon + 1 + Integer.parseInt(key, 0, colon, 10);
        int botColon = key.indexOf(':', chatEnd + 1);
        return key.substring(0, botColon + 1 + Integer.parseInt(key, chatEnd + 1, botColon, 10));
    }

    /** The prefix every key of {@code chatId} and {@code botId} starts with. */
    static String chatAndBot(String chatId, String botId) {
        StringBuilder s = new StringBuilder();
        part(s, chatId);
        s.append('|');
        part(s, botId);
        return s.toString();
    }

    private static void part(StringBuilder s, String value) {
        s.append(value.length()).append(':').append(value);
    }
}
