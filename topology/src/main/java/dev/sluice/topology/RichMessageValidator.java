package dev.sluice.topology;

import dev.sluice.avro.EditPart;
import dev.sluice.avro.InlineButton;
import dev.sluice.avro.InlineKeyboard;
import dev.sluice.avro.Media;
import dev.sluice.avro.Notification;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The rules for a notification's Telegram extras (issue 20): inline keyboard, media and caption, forum topic, edits and
 * deletes. Pure and stateless (no thread owns state); called by {@link NotificationValidator#validate}. Each broken
 * rule throws an {@link InvalidNotificationException} naming the field and the value, which dead-letters the record.
 * <ul>
 *   <li>{@code reply_markup}: 1 to {@value #MAX_BUTTONS} buttons, at most {@value #MAX_BUTTONS_PER_ROW} a row, no empty
 *       row; each button has a text of 1 to {@value #MAX_BUTTON_TEXT_LENGTH} characters and exactly one of {@code url}
 *       (scheme http, https or tg, at most {@value #MAX_URL_BYTES} bytes) or {@code callback_data} (1 to
 *       {@value #MAX_CALLBACK_DATA_BYTES} bytes in UTF-8, Telegram's limit)</li>
 *   <li>{@code media}: exactly one of {@code url} (http or https) or {@code file_id} (at most
 *       {@value #MAX_FILE_ID_BYTES} bytes); the text is the caption: at most {@value NotificationValidator#MAX_CAPTION_LENGTH}
 *       characters, and may be empty</li>
 *   <li>{@code message_thread_id}: positive</li>
 *   <li>{@code edit_of} and {@code delete_of}: not both, not the notification's own id, at most
 *       {@value NotificationValidator#MAX_ID_BYTES} bytes; an edit carries no media (Telegram edits text, caption or
 *       markup); an edit of TEXT has a text of at most 4,096 characters, of CAPTION at most 1,024</li>
 * </ul>
 */
final class RichMessageValidator {
    /** Telegram: {@code callback_data} 1-64 bytes. */
    static final int MAX_CALLBACK_DATA_BYTES = 64;
    /** Telegram answers more than 100 inline buttons with "Bad Request: too many buttons" ... */
    static final int MAX_BUTTONS = 100;
    /** ... and shows at most 8 in a row. */
    static final int MAX_BUTTONS_PER_ROW = 8;
    /** Sluice's bound on a button label (Telegram shows about this much and documents none). */
    static final int MAX_BUTTON_TEXT_LENGTH = 64;
    /** A URL in a button or of a media file. */
    static final int MAX_URL_BYTES = 2048;
    /** A Telegram {@code file_id} is about 70-90 characters. */
    static final int MAX_FILE_ID_BYTES = 256;
    private static final Set<String> BUTTON_SCHEMES = Set.of("http", "https", "tg");
    private static final Set<String> MEDIA_SCHEMES = Set.of("http", "https");

    private RichMessageValidator() {
    }

    /** Whether this notification asks to edit or delete an earlier one (its text may then not be a message text). */
    static boolean isEditOrDelete(Notification n) {
        return n.getEditOf() != null || n.getDeleteOf() != null;
    }

    static void validate(Notification n) {
        String id = NotificationValidator.shortened(n.getId());
        if (n.getMessageThreadId() != null && n.getMessageThreadId() <= 0) {
            throw new InvalidNotificationException("message_thread_id", "field message_thread_id is " + n.getMessageThreadId()
                    + ", not a positive forum topic id (notification id " + id + ")");
        }
        if (n.getReplyMarkup() != null) {
            validateKeyboard(n.getReplyMarkup(), id);
        }
        if (n.getMedia() != null) {
            validateMedia(n.getMedia(), id);
        }
        if (n.getEditOf() != null && n.getDeleteOf() != null) {
            throw new InvalidNotificationException("edit_of", "fields edit_of '" + NotificationValidator.shortened(n.getEditOf())
                    + "' and delete_of '" + NotificationValidator.shortened(n.getDeleteOf()) + "' are both set; a notification edits"
                    + " or deletes one message (notification id " + id + ")");
        }
        for (String field : List.of("edit_of", "delete_of")) {
            String target = field.equals("edit_of") ? n.getEditOf() : n.getDeleteOf();
            if (target == null) {
                continue;
            }
            if (target.isBlank() || target.getBytes(StandardCharsets.UTF_8).length > NotificationValidator.MAX_ID_BYTES) {
                throw new InvalidNotificationException(field, "field " + field + " '" + NotificationValidator.shortened(target)
                        + "' is blank or longer than " + NotificationValidator.MAX_ID_BYTES + " bytes (notification id " + id + ")");
            }
            if (target.equals(n.getId())) {
                throw new InvalidNotificationException(field, "field " + field + " names the notification itself ('"
                        + NotificationValidator.shortened(target) + "')");
            }
        }
        if (n.getEditOf() != null) {
            if (n.getMedia() != null) {
                throw new InvalidNotificationException("media", "field media is set on an edit (edit_of '"
                        + NotificationValidator.shortened(n.getEditOf()) + "'): Sluice edits text, caption or reply_markup only"
                        + " (notification id " + id + ")");
            }
            EditPart part = n.getEditPart() == null ? EditPart.TEXT : n.getEditPart();
            if (part == EditPart.TEXT) {
                NotificationValidator.requireMessageText(n, NotificationValidator.MAX_TEXT_LENGTH, "Telegram editMessageText");
            } else if (part == EditPart.CAPTION) {
                NotificationValidator.maxCharacters(n, NotificationValidator.MAX_CAPTION_LENGTH, "caption", "Telegram editMessageCaption");
            }
        }
    }

    private static void validateKeyboard(InlineKeyboard keyboard, String id) {
        List<List<InlineButton>> rows = keyboard.getRows();
        int buttons = rows.stream().mapToInt(List::size).sum();
        if (buttons == 0 || buttons > MAX_BUTTONS) {
            throw new InvalidNotificationException("reply_markup", "field reply_markup has " + buttons + " buttons; an inline"
                    + " keyboard has 1 to " + MAX_BUTTONS + " (notification id " + id + ")");
        }
        for (int r = 0; r < rows.size(); r++) {
            List<InlineButton> row = rows.get(r);
            if (row.isEmpty() || row.size() > MAX_BUTTONS_PER_ROW) {
                throw new InvalidNotificationException("reply_markup", "field reply_markup row " + (r + 1) + " has " + row.size()
                        + " buttons; a row has 1 to " + MAX_BUTTONS_PER_ROW + " (notification id " + id + ")");
            }
            for (int b = 0; b < row.size(); b++) {
                validateButton(row.get(b), "reply_markup row " + (r + 1) + " button " + (b + 1), id);
            }
        }
    }

    private static void validateButton(InlineButton button, String where, String id) {
        String text = button.getText();
        if (text == null || text.isBlank() || text.length() > MAX_BUTTON_TEXT_LENGTH) {
            throw new InvalidNotificationException("reply_markup", "field " + where + " text '"
                    + NotificationValidator.shortened(text) + "' is blank or longer than " + MAX_BUTTON_TEXT_LENGTH
                    + " characters (notification id " + id + ")");
        }
        boolean hasUrl = button.getUrl() != null;
        boolean hasData = button.getCallbackData() != null;
        if (hasUrl == hasData) {
            throw new InvalidNotificationException("reply_markup", "field " + where + " ('" + NotificationValidator.shortened(text)
                    + "') has " + (hasUrl ? "both url and callback_data" : "neither url nor callback_data")
                    + "; it needs exactly one (notification id " + id + ")");
        }
        if (hasUrl) {
            requireUrl("reply_markup", where + " url", button.getUrl(), BUTTON_SCHEMES, id);
        } else {
            int bytes = button.getCallbackData().getBytes(StandardCharsets.UTF_8).length;
            if (bytes == 0 || bytes > MAX_CALLBACK_DATA_BYTES) {
                throw new InvalidNotificationException("reply_markup", "field " + where + " callback_data '"
                        + NotificationValidator.shortened(button.getCallbackData()) + "' has " + bytes + " bytes; Telegram allows 1 to "
                        + MAX_CALLBACK_DATA_BYTES + " (UTF-8; notification id " + id + ")");
            }
        }
    }

    private static void validateMedia(Media media, String id) {
        boolean hasUrl = media.getUrl() != null;
        boolean hasFileId = media.getFileId() != null;
        if (hasUrl == hasFileId) {
            throw new InvalidNotificationException("media", "field media (" + media.getType() + ") has "
                    + (hasUrl ? "both url and file_id" : "neither url nor file_id") + "; it needs exactly one (notification id "
                    + id + ")");
        }
        if (hasUrl) {
            requireUrl("media", "media url", media.getUrl(), MEDIA_SCHEMES, id);
        } else {
            String fileId = media.getFileId();
            if (fileId.isBlank() || fileId.getBytes(StandardCharsets.UTF_8).length > MAX_FILE_ID_BYTES
                    || fileId.chars().anyMatch(Character::isWhitespace)) {
                throw new InvalidNotificationException("media", "field media file_id '" + NotificationValidator.shortened(fileId)
                        + "' is blank, has white space or is longer than " + MAX_FILE_ID_BYTES + " bytes (notification id " + id + ")");
            }
        }
    }

    private static void requireUrl(String field, String where, String url, Set<String> schemes, String id) {
        String reason = null;
        if (url.getBytes(StandardCharsets.UTF_8).length > MAX_URL_BYTES) {
            reason = "is longer than " + MAX_URL_BYTES + " bytes";
        } else {
            try {
                URI uri = new URI(url);
                String scheme = uri.getScheme() == null ? null : uri.getScheme().toLowerCase(Locale.ROOT);
                if (scheme == null || !schemes.contains(scheme)) {
                    reason = "has scheme " + (scheme == null ? "none" : "'" + scheme + "'") + "; allowed: " + schemes.stream().sorted().toList();
                } else if (!scheme.equals("tg") && (uri.getHost() == null || uri.getHost().isBlank())) {
                    reason = "has no host";
                }
            } catch (URISyntaxException e) {
                reason = "is not a URL (" + e.getReason() + ")";
            }
        }
        if (reason != null) {
            throw new InvalidNotificationException(field, "field " + where + " '" + NotificationValidator.shortened(url) + "' "
                    + reason + " (notification id " + id + ")");
        }
    }
}
