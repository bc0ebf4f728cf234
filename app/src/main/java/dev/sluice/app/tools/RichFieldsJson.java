package dev.sluice.app.tools;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.avro.EditPart;
import dev.sluice.avro.InlineButton;
import dev.sluice.avro.InlineKeyboard;
import dev.sluice.avro.Media;
import dev.sluice.avro.MediaType;
import dev.sluice.avro.Notification;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The JSON of issue 20's fields for {@code sluice produce} ({@link NotificationJson}): {@code reply_markup} as Telegram writes
 * it ({@code {"inline_keyboard": [[{"text": "Open", "url": "https://..."}, {"text": "Snooze", "callback_data": "snooze:42"}]]}},
 * or just the array of rows), {@code disable_notification}, {@code protect_content}, {@code link_preview_disabled} (booleans),
 * {@code message_thread_id} (an integer), {@code media} ({@code {"type": "photo", "url": "https://..."}} or with
 * {@code "file_id"}; type photo, document, video, animation or audio), {@code edit_of}, {@code edit_part} (text, caption or
 * reply_markup) and {@code delete_of}. Stateless.
 */
final class RichFieldsJson {
    static final Set<String> FIELDS = Set.of("reply_markup", "disable_notification", "protect_content", "link_preview_disabled",
            "message_thread_id", "media", "edit_of", "edit_part", "delete_of");
    private static final Set<String> BUTTON_FIELDS = Set.of("text", "url", "callback_data");
    private static final Set<String> MEDIA_FIELDS = Set.of("type", "url", "file_id");

    private RichFieldsJson() {
    }

    /** Whether the line may leave {@code text} out: a delete, a markup edit, or media (an empty caption). */
    static boolean textOptional(JsonNode node) {
        return has(node, "delete_of") || has(node, "media")
                || has(node, "edit_part") && "reply_markup".equalsIgnoreCase(node.get("edit_part").asText());
    }

    static void apply(long line, JsonNode node, Notification.Builder b) {
        b.setReplyMarkup(keyboard(line, node.get("reply_markup")));
        b.setDisableNotification(bool(line, node, "disable_notification"));
        b.setProtectContent(bool(line, node, "protect_content"));
        b.setLinkPreviewDisabled(bool(line, node, "link_preview_disabled"));
        JsonNode thread = node.get("message_thread_id");
        if (thread != null && !thread.isNull()) {
            if (!thread.isIntegralNumber() || !thread.canConvertToLong()) {
                throw new InvalidLineException(line, "message_thread_id", "expected an integer, got " + thread);
            }
            b.setMessageThreadId(thread.asLong());
        }
        b.setMedia(media(line, node.get("media")));
        b.setEditOf(string(line, node, "edit_of"));
        b.setDeleteOf(string(line, node, "delete_of"));
        String part = string(line, node, "edit_part");
        if (part != null) {
            try {
                b.setEditPart(EditPart.valueOf(part.toUpperCase(Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw new InvalidLineException(line, "edit_part", "'" + part + "' is not one of text, caption, reply_markup");
            }
        }
    }

    private static InlineKeyboard keyboard(long line, JsonNode v) {
        if (v == null || v.isNull()) {
            return null;
        }
        JsonNode rows = v.isObject() ? v.get("inline_keyboard") : v;
        if (rows == null || !rows.isArray()) {
            throw new InvalidLineException(line, "reply_markup", "expected {\"inline_keyboard\": [[buttons]]} or [[buttons]], got "
                    + cut(v.toString()));
        }
        List<List<InlineButton>> out = new ArrayList<>();
        for (JsonNode row : rows) {
            if (!row.isArray()) {
                throw new InvalidLineException(line, "reply_markup", "each row is an array of buttons, got " + cut(row.toString()));
            }
            List<InlineButton> buttons = new ArrayList<>();
            for (JsonNode button : row) {
                if (!button.isObject()) {
                    throw new InvalidLineException(line, "reply_markup", "a button is an object, got " + cut(button.toString()));
                }
                unknown(line, "reply_markup", button, BUTTON_FIELDS);
                buttons.add(InlineButton.newBuilder().setText(string(line, button, "text", "reply_markup"))
                        .setUrl(string(line, button, "url", "reply_markup"))
                        .setCallbackData(string(line, button, "callback_data", "reply_markup")).build());
            }
            out.add(buttons);
        }
        return InlineKeyboard.newBuilder().setRows(out).build();
    }

    private static Media media(long line, JsonNode v) {
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isObject()) {
            throw new InvalidLineException(line, "media", "expected {\"type\": \"photo\", \"url\": ...}, got " + cut(v.toString()));
        }
        unknown(line, "media", v, MEDIA_FIELDS);
        String type = string(line, v, "type", "media");
        MediaType mediaType;
        try {
            mediaType = MediaType.valueOf(String.valueOf(type).toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new InvalidLineException(line, "media.type", "'" + type + "' is not one of "
                    + Arrays.toString(MediaType.values()).toLowerCase(Locale.ROOT));
        }
        return Media.newBuilder().setType(mediaType).setUrl(string(line, v, "url", "media"))
                .setFileId(string(line, v, "file_id", "media")).build();
    }

    private static void unknown(long line, String field, JsonNode object, Set<String> known) {
        for (Iterator<String> it = object.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (!known.contains(name)) {
                throw new InvalidLineException(line, field + "." + name, "unknown field (known: " + known.stream().sorted().toList() + ")");
            }
        }
    }

    private static boolean bool(long line, JsonNode node, String field) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return false;
        }
        if (!v.isBoolean()) {
            throw new InvalidLineException(line, field, "expected true or false, got " + cut(v.toString()));
        }
        return v.asBoolean();
    }

    private static String string(long line, JsonNode node, String field) {
        return string(line, node, field, null);
    }

    private static String string(long line, JsonNode node, String field, String parent) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw new InvalidLineException(line, parent == null ? field : parent + "." + field, "expected a string, got " + cut(v.toString()));
        }
        return v.asText();
    }

    private static boolean has(JsonNode node, String field) {
        return node.get(field) != null && !node.get(field).isNull();
    }

    private static String cut(String s) {
        return s.length() <= 80 ? s : s.substring(0, 80) + "...";
    }
}
