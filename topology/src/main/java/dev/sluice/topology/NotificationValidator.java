package dev.sluice.topology;

import dev.sluice.avro.Notification;

/**
 * The rules a notification must meet before it enters the pipeline. Pure, stateless.
 * <ul>
 *   <li>{@code id} present and not blank (the idempotency key end to end)</li>
 *   <li>{@code bot_id} present and not blank</li>
 *   <li>{@code chat_id} present and not blank</li>
 *   <li>{@code text} present, not blank and at most {@value #MAX_TEXT_LENGTH} characters (Telegram Bot API
 *       sendMessage: "1-4096 characters"; counted in UTF-16 code units, which is never fewer than
 *       Telegram's count, so nothing we pass is refused for length)</li>
 * </ul>
 */
public final class NotificationValidator {
    /** Telegram Bot API sendMessage text limit. */
    public static final int MAX_TEXT_LENGTH = 4096;

    private NotificationValidator() {
    }

    /** @throws InvalidNotificationException naming the first broken rule's field and value */
    public static void validate(Notification n) {
        requireText("id", n.getId());
        requireText("bot_id", n.getBotId());
        requireText("chat_id", n.getChatId());
        requireText("text", n.getText());
        int length = n.getText().length();
        if (length > MAX_TEXT_LENGTH) {
            throw new InvalidNotificationException("text", "field text has " + length + " characters, more than the "
                    + MAX_TEXT_LENGTH + " allowed by Telegram sendMessage (notification id " + n.getId() + ")");
        }
    }

    private static void requireText(String field, String value) {
        if (value == null) {
            throw new InvalidNotificationException(field, "field " + field + " is missing (null)");
        }
        if (value.isBlank()) {
            throw new InvalidNotificationException(field, "field " + field + " is blank: '" + value + "'");
        }
    }
}
