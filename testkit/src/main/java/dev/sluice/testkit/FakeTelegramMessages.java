package dev.sluice.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The messages a {@link FakeTelegram} issued, per bot and chat, and the Bot API rules of the methods beyond
 * {@code sendMessage} (issue 20): {@code sendPhoto}, {@code sendDocument}, {@code sendVideo}, {@code sendAnimation},
 * {@code sendAudio}, {@code editMessageText}, {@code editMessageCaption}, {@code editMessageReplyMarkup} and
 * {@code deleteMessage}, answering with Telegram's descriptions. Not thread-safe: the fake calls it under its lock.
 */
final class FakeTelegramMessages {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Telegram's caption limit (sendPhoto ..., editMessageCaption). */
    static final int MAX_CAPTION_LENGTH = 1024;
    static final int MAX_CALLBACK_DATA_BYTES = 64;
    static final int MAX_BUTTONS = 100;
    static final Map<String, String> MEDIA_PARAMETER = Map.of("sendphoto", "photo", "senddocument", "document",
            "sendvideo", "video", "sendanimation", "animation", "sendaudio", "audio");
    static final Set<String> EDITS = Set.of("editmessagetext", "editmessagecaption", "editmessagereplymarkup");

    private final Map<String, Map<Long, FakeTelegram.Message>> byChat = new HashMap<>();

    /** A request's problem as Telegram words it (400 "Bad Request: ..."), or null when it may be applied. */
    static String invalid(String method, Map<String, String> params) {
        String media = MEDIA_PARAMETER.get(method);
        if (media != null) {
            String file = params.get(media);
            if (file == null || file.isBlank()) {
                return "Bad Request: there is no " + media + " in the request";
            }
            if (file.contains("://") && !(file.startsWith("http://") || file.startsWith("https://"))) {
                return "Bad Request: wrong HTTP URL specified";
            }
            String caption = params.get("caption");
            if (caption != null && caption.length() > MAX_CAPTION_LENGTH) {
                return "Bad Request: message caption is too long";
            }
        }
        if (EDITS.contains(method) || method.equals("deletemessage")) {
            String id = params.get("message_id");
            if (id == null || id.isBlank()) {
                return "Bad Request: message identifier is not specified";
            }
            try {
                if (Long.parseLong(id.trim()) <= 0) {
                    return "Bad Request: message identifier is not specified";
                }
            } catch (NumberFormatException e) {
                return "Bad Request: message identifier is not specified";
            }
        }
        if (method.equals("editmessagetext")) {
            String text = params.get("text");
            if (text == null || text.isBlank()) {
                return "Bad Request: text must be non-empty";
            }
            if (text.length() > FakeTelegram.MAX_TEXT_LENGTH) {
                return "Bad Request: MESSAGE_TOO_LONG";
            }
        }
        if (method.equals("editmessagecaption")) {
            String caption = params.get("caption");
            if (caption != null && caption.length() > MAX_CAPTION_LENGTH) {
                return "Bad Request: message caption is too long";
            }
        }
        String thread = params.get("message_thread_id");
        if (thread != null) {
            try {
                if (Long.parseLong(thread.trim()) <= 0) {
                    return "Bad Request: message thread not found";
                }
            } catch (NumberFormatException e) {
                return "Bad Request: message thread not found";
            }
        }
        return params.containsKey("reply_markup") ? invalidMarkup(params.get("reply_markup")) : null;
    }

    /** Whether the request asked for no link preview: {@code link_preview_options} with {@code is_disabled}, or {@code disable_web_page_preview}. */
    static boolean linkPreviewDisabled(Map<String, String> params) {
        if (Boolean.parseBoolean(params.get("disable_web_page_preview"))) {
            return true;
        }
        String options = params.get("link_preview_options");
        if (options == null) {
            return false;
        }
        try {
            JsonNode node = JSON.readTree(options);
            return node != null && node.path("is_disabled").asBoolean(false);
        } catch (IOException e) {
            return false;
        }
    }

    private static String invalidMarkup(String markup) {
        JsonNode node;
        try {
            node = JSON.readTree(markup);
        } catch (IOException e) {
            return "Bad Request: can't parse reply keyboard markup JSON object";
        }
        JsonNode rows = node == null ? null : node.get("inline_keyboard");
        if (rows == null || !rows.isArray()) {
            return "Bad Request: object expected as reply markup";
        }
        int buttons = 0;
        for (JsonNode row : rows) {
            if (!row.isArray()) {
                return "Bad Request: field \"inline_keyboard\" of the InlineKeyboardMarkup must be an Array of Arrays";
            }
            for (JsonNode b : row) {
                buttons++;
                String text = b.path("text").asText("");
                if (text.isEmpty()) {
                    return "Bad Request: text buttons are unallowed in the inline keyboard";
                }
                boolean url = b.hasNonNull("url");
                boolean data = b.hasNonNull("callback_data");
                if (url == data) {
                    return "Bad Request: can't parse inline keyboard button: exactly one of the optional fields must be used";
                }
                if (data) {
                    int bytes = b.get("callback_data").asText().getBytes(StandardCharsets.UTF_8).length;
                    if (bytes < 1 || bytes > MAX_CALLBACK_DATA_BYTES) {
                        return "Bad Request: BUTTON_DATA_INVALID";
                    }
                } else {
                    String u = b.get("url").asText().toLowerCase(Locale.ROOT);
                    if (!(u.startsWith("http://") || u.startsWith("https://") || u.startsWith("tg://"))) {
                        return "Bad Request: BUTTON_URL_INVALID";
                    }
                }
            }
        }
        return buttons > MAX_BUTTONS ? "Bad Request: REPLY_MARKUP_TOO_LONG" : null;
    }

    /** Records a message the fake just issued (a send of any kind). */
    void issued(String key, FakeTelegram.Message message) {
        byChat.computeIfAbsent(key, k -> new HashMap<>()).put(message.messageId(), message);
    }

    FakeTelegram.Message get(String key, long messageId) {
        Map<Long, FakeTelegram.Message> messages = byChat.get(key);
        return messages == null ? null : messages.get(messageId);
    }

    /**
     * Applies an edit or delete to an issued message: the message as it is now, or Telegram's 400 description
     * ("message to edit not found", "message is not modified", "there is no text in the message to edit", ...).
     */
    Object apply(String key, String method, Map<String, String> params) {
        long id = Long.parseLong(params.get("message_id").trim());
        FakeTelegram.Message m = get(key, id);
        if (m == null || m.deleted()) {
            return method.equals("deletemessage") ? "Bad Request: message to delete not found" : "Bad Request: message to edit not found";
        }
        FakeTelegram.Message next = switch (method) {
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

    void clear() {
        byChat.clear();
    }
}
