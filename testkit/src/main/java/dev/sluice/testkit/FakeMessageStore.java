package dev.sluice.testkit;

import java.util.HashMap;
import java.util.Map;

/**
 * The messages a {@link FakeTelegram} issued, per bot and chat (key {@code <bot id>|<chat id>}): the message ids it
 * issued (increasing per chat from 1, as Telegram's), each message as it is now, and the edits and deletes applied to
 * them, refused with Telegram's 400 descriptions. Not thread-safe: {@link FakeTelegramMethods} calls it under its lock.
 */
final class FakeMessageStore {
    /** Key → the last message id issued to that chat. */
    private final Map<String, Long> lastMessageId = new HashMap<>();
    private final Map<String, Map<Long, FakeTelegramMessage>> byChat = new HashMap<>();

    /** The next message id of {@code key}'s chat (1 for its first message). */
    long nextId(String key) {
        return lastMessageId.merge(key, 1L, Long::sum);
    }

    /** Records a message the fake just issued (a send of any kind). */
    void issued(String key, FakeTelegramMessage message) {
        byChat.computeIfAbsent(key, k -> new HashMap<>()).put(message.messageId(), message);
    }

    /** The message {@code messageId} of {@code key}'s chat as it is now, or null. */
    FakeTelegramMessage get(String key, long messageId) {
        Map<Long, FakeTelegramMessage> messages = byChat.get(key);
        return messages == null ? null : messages.get(messageId);
    }

    /**
     * Applies an edit or delete to an issued message: the message as it is now, or Telegram's 400 description
     * ("message to edit not found", "message is not modified", "there is no text in the message to edit", ...).
     */
    Object apply(String key, String method, Map<String, String> params) {
        long id = Long.parseLong(params.get("message_id").trim());
        FakeTelegramMessage m = get(key, id);
        if (m == null || m.deleted()) {
            return method.equals("deletemessage") ? "Bad Request: message to delete not found" : "Bad Request: message to edit not found";
        }
        FakeTelegramMessage next = switch (method) {
            case "deletemessage" -> m.withDeleted();
            case "editmessagetext" -> {
                if (m.mediaType() != null) {
                    yield null;
                }
                yield m.withText(params.get("text"), params.get("reply_markup"));
            }
            case "editmessagecaption" -> m.mediaType() == null ? null : m.withText(params.get("caption"), params.get("reply_markup"));
            default -> m.withText(m.text(), params.get("reply_markup"));
        };
        if (next == null) {
            return method.equals("editmessagetext") ? "Bad Request: there is no text in the message to edit"
                    : "Bad Request: there is no caption in the message to edit";
        }
        if (!method.equals("deletemessage") && next.equals(m)) {
            return "Bad Request: message is not modified: specified new message content and reply markup are exactly the same"
                    + " as a current content and reply markup of the message";
        }
        byChat.get(key).put(id, next);
        return next;
    }

    /** Forgets every message and restarts the ids (FakeTelegram's reset). */
    void clear() {
        byChat.clear();
        lastMessageId.clear();
    }
}
