package dev.sluice.topology;

import dev.sluice.avro.EditPart;
import dev.sluice.avro.Notification;
import dev.sluice.chat.Identifiers;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The rules a notification must meet before it enters the pipeline. Pure, stateless (no thread owns state).
 * <ul>
 *   <li>{@code id} present and not blank (the idempotency key end to end)</li>
 *   <li>{@code bot_id} (and each {@code bot_pool} entry) present, not blank and a bot id by {@link Identifiers}' rule
 *       (a name no sender can have a token for is never sent)</li>
 *   <li>{@code chat_id} present, not blank and without control characters ({@link Identifiers}: the chat-status store
 *       joins chat and bot with U+001F); nor have {@code id}, {@code kind}, {@code entity}, {@code user_id} (keys, not
 *       text); a reason shows a value escaped ({@link Identifiers#escape})</li>
 *   <li>{@code text} present, not blank and at most {@value #MAX_TEXT_LENGTH} characters (Telegram Bot API
 *       sendMessage: "1-4096 characters"; counted in UTF-16 code units, which is never fewer than
 *       Telegram's count, so nothing we pass is refused for length)</li>
 *   <li>{@code edit_part} only with {@code edit_of} (what an edit replaces; without it the notification would be sent
 *       as a new message)</li>
 *   <li>with {@code media} the text is a caption: at most {@value #MAX_CAPTION_LENGTH} characters, may be empty; a
 *       delete's text (and a markup edit's) is not sent, only bounded; the extras by {@link RichMessageValidator}</li>
 *   <li>with {@code text.too.long=split} ({@link #validate(Notification, int)} with more than one part allowed) a longer
 *       text of a send (not an edit) passes when {@link TextSplitter} cuts it into at most {@code text.split.max.parts}
 *       parts (the first at most the caption limit when it carries media, every other at most
 *       {@value #MAX_TEXT_LENGTH}); a text that needs more is dead-lettered naming the field, its length and the key.
 *       Such a notification is at most 20 x 4,096 characters of text (about 240 KiB in UTF-8), still far below
 *       {@code max.request.size}</li>
 *   <li>every other field bounded in UTF-8 bytes (constants below), so that no record the topology writes
 *       (outbox, digest store changelog, results) can exceed a producer's {@code max.request.size} (1 MiB by
 *       default): a notification is at most about 32 KiB, a digest entry (the latest notification plus at most
 *       {@code digest.max.folded.ids} = 1000 ids of 256 bytes) at most about 300 KiB. Without the bounds one
 *       oversized record failed its stream thread again after every replacement (F9).</li>
 *   <li>{@code not_before} at most {@code schedule.max.horizon.ms} after now ({@link #validateNotBefore}), so a
 *       scheduled notification cannot wait forever without a result.</li>
 * </ul>
 */
public final class NotificationValidator {
    /** Telegram Bot API sendMessage text limit. */
    public static final int MAX_TEXT_LENGTH = 4096;
    /** Telegram Bot API media caption limit (sendPhoto ..., editMessageCaption). */
    public static final int MAX_CAPTION_LENGTH = 1024;
    /** {@code id}: room for a UUID, a ULID or a namespaced business key. */
    public static final int MAX_ID_BYTES = 256;
    /** {@code bot_id}: the sender's bot-id rule allows 64 characters. */
    public static final int MAX_BOT_ID_BYTES = 64;
    /** {@code chat_id}: a numeric id, an {@code @username} (32 at most) or another provider's recipient. */
    public static final int MAX_CHAT_ID_BYTES = 256;
    /** {@code kind}. */
    public static final int MAX_KIND_BYTES = 256;
    /** {@code entity}. */
    public static final int MAX_ENTITY_BYTES = 1024;
    /** {@code user_id}. */
    public static final int MAX_USER_ID_BYTES = 256;
    /** {@code parse_mode} ({@code MarkdownV2} is the longest Telegram knows). */
    public static final int MAX_PARSE_MODE_BYTES = 32;
    /** {@code bot_pool}: entries, each at most {@link #MAX_BOT_ID_BYTES}. */
    public static final int MAX_BOT_POOL_ENTRIES = 16;
    /** {@code attributes}: all keys and values together. */
    public static final int MAX_ATTRIBUTES_BYTES = 16 * 1024;

    private NotificationValidator() {
    }

    /**
     * The rules with {@code text.too.long=dead-letter}: a text longer than one message allows is invalid.
     *
     * @throws InvalidNotificationException naming the first broken rule's field and value
     */
    public static void validate(Notification n) {
        validate(n, 1);
    }

    /**
     * @param maxParts 1 with {@code text.too.long=dead-letter}; else {@code text.split.max.parts}: the parts a send's
     *                 too-long text may be split into
     * @throws InvalidNotificationException naming the first broken rule's field and value
     */
    public static void validate(Notification n, int maxParts) {
        requireText("id", n.getId());
        maxBytes("id", n.getId(), MAX_ID_BYTES);
        requireNoControl("id", n.getId(), n.getId());
        requireText("bot_id", n.getBotId());
        maxBytes("bot_id", n.getBotId(), MAX_BOT_ID_BYTES);
        requireBotId("bot_id", n.getBotId(), n.getId());
        requireText("chat_id", n.getChatId());
        maxBytes("chat_id", n.getChatId(), MAX_CHAT_ID_BYTES);
        requireNoControl("chat_id", n.getChatId(), n.getId());
        if (n.getEditPart() != null && n.getEditOf() == null) { // before the text rules: they depend on what is edited
            throw new InvalidNotificationException("edit_part", "field edit_part " + n.getEditPart() + " is set without edit_of:"
                    + " it says what an edit replaces; name the notification to edit in edit_of, or leave edit_part out"
                    + " (notification id " + Identifiers.escape(shortened(n.getId())) + ")");
        }
        if (n.getText() == null) {
            throw new InvalidNotificationException("text", "field text is missing (null)");
        }
        if (n.getDeleteOf() != null || (n.getEditOf() != null && n.getEditPart() == EditPart.REPLY_MARKUP)) {
            maxCharacters(n, MAX_TEXT_LENGTH, "text", "Telegram"); // not sent: only bounded
        } else if (n.getEditOf() != null && n.getEditPart() == EditPart.CAPTION) {
            maxCharacters(n, MAX_CAPTION_LENGTH, "caption", "Telegram editMessageCaption");
        } else if (n.getMedia() != null && n.getEditOf() == null) {
            if (maxParts > 1 && n.getText().length() > MAX_CAPTION_LENGTH) {
                requireParts(n, MAX_CAPTION_LENGTH, maxParts);
            } else {
                maxCharacters(n, MAX_CAPTION_LENGTH, "caption", "Telegram send" + mediaMethod(n));
            }
        } else if (n.getEditOf() == null && maxParts > 1 && n.getText().length() > MAX_TEXT_LENGTH) {
            requireText("text", n.getText());
            requireParts(n, MAX_TEXT_LENGTH, maxParts);
        } else {
            requireMessageText(n, MAX_TEXT_LENGTH, n.getEditOf() != null ? "Telegram editMessageText" : "Telegram sendMessage");
        }
        RichMessageValidator.validate(n);
        maxBytes("kind", n.getKind(), MAX_KIND_BYTES);
        requireNoControl("kind", n.getKind(), n.getId());
        maxBytes("entity", n.getEntity(), MAX_ENTITY_BYTES);
        requireNoControl("entity", n.getEntity(), n.getId());
        maxBytes("user_id", n.getUserId(), MAX_USER_ID_BYTES);
        requireNoControl("user_id", n.getUserId(), n.getId());
        maxBytes("parse_mode", n.getParseMode(), MAX_PARSE_MODE_BYTES);
        List<String> pool = n.getBotPool();
        if (pool.size() > MAX_BOT_POOL_ENTRIES) {
            throw new InvalidNotificationException("bot_pool", "field bot_pool has " + pool.size() + " entries, more than "
                    + MAX_BOT_POOL_ENTRIES + " (notification id " + shortened(n.getId()) + ")");
        }
        for (String bot : pool) {
            maxBytes("bot_pool", bot, MAX_BOT_ID_BYTES);
            requireBotId("bot_pool", bot, n.getId());
        }
        long attributeBytes = 0;
        for (Map.Entry<String, String> e : n.getAttributes().entrySet()) {
            attributeBytes += utf8Length(e.getKey()) + utf8Length(e.getValue());
        }
        if (attributeBytes > MAX_ATTRIBUTES_BYTES) {
            throw new InvalidNotificationException("attributes", "field attributes has " + attributeBytes + " bytes, more than "
                    + MAX_ATTRIBUTES_BYTES + " (keys and values in UTF-8, " + n.getAttributes().size()
                    + " entries; notification id " + shortened(n.getId()) + ")");
        }
    }

    /**
     * @param nowMs            the wall-clock time of the check, epoch ms
     * @param maxHorizonMs     {@code schedule.max.horizon.ms}
     * @throws InvalidNotificationException when {@code not_before} is more than {@code maxHorizonMs} after now
     */
    public static void validateNotBefore(Notification n, long nowMs, long maxHorizonMs) {
        if (n.getNotBefore() == null) {
            return;
        }
        long notBefore = n.getNotBefore().toEpochMilli();
        if (notBefore > nowMs && notBefore - nowMs > maxHorizonMs) {
            throw new InvalidNotificationException("not_before", "field not_before " + n.getNotBefore() + " is more than "
                    + maxHorizonMs + " ms after now (" + Instant.ofEpochMilli(nowMs) + "; schedule.max.horizon.ms), "
                    + "so it would wait in the schedule store without a result (notification id " + shortened(n.getId()) + ")");
        }
    }

    /** A text longer than one message: it must split into at most {@code maxParts} parts ({@link TextSplitter}). */
    private static void requireParts(Notification n, int firstMax, int maxParts) {
        int length = n.getText().length();
        // more than maxParts full parts can never fit: no need to cut a huge text to know
        if ((long) length > firstMax + (long) (maxParts - 1) * MAX_TEXT_LENGTH
                || TextSplitter.split(n.getText(), firstMax, MAX_TEXT_LENGTH, maxParts).isEmpty()) {
            throw new InvalidNotificationException("text", "field text has " + length + " characters: split at paragraph,"
                    + " line and word boundaries into parts of at most " + MAX_TEXT_LENGTH + (firstMax == MAX_TEXT_LENGTH ? ""
                    : " (the first, a media caption, at most " + firstMax + ")") + " it needs more than the " + maxParts
                    + " parts text.split.max.parts allows (notification id " + n.getId() + ")");
        }
    }

    /** {@code text} present, not blank, at most {@code max} characters, else dead-lettered naming {@code method}. */
    static void requireMessageText(Notification n, int max, String method) {
        requireText("text", n.getText());
        maxCharacters(n, max, "text", method);
    }

    /** {@code text} at most {@code max} characters (UTF-16 units); {@code what} is how Telegram calls it here. */
    static void maxCharacters(Notification n, int max, String what, String method) {
        int length = n.getText().length();
        if (length > max) {
            throw new InvalidNotificationException("text", "field text has " + length + " characters, more than the "
                    + max + " allowed by " + method + (what.equals("text") ? "" : " for a " + what)
                    + " (notification id " + n.getId() + ")");
        }
    }

    private static String mediaMethod(Notification n) {
        String type = n.getMedia().getType().name();
        return type.charAt(0) + type.substring(1).toLowerCase(java.util.Locale.ROOT);
    }

    private static void requireText(String field, String value) {
        if (value == null) {
            throw new InvalidNotificationException(field, "field " + field + " is missing (null)");
        }
        if (value.isBlank()) {
            throw new InvalidNotificationException(field, "field " + field + " is blank: '" + Identifiers.escape(value) + "'");
        }
    }

    private static void maxBytes(String field, String value, int max) {
        if (value == null) {
            return;
        }
        if ((long) value.length() * 3 <= max) {
            return; // a UTF-16 unit is at most 3 bytes in UTF-8 (a surrogate pair 4): within the bound without encoding it
        }
        long bytes = utf8Length(value);
        if (bytes > max) {
            throw new InvalidNotificationException(field, "field " + field + " has " + bytes + " bytes, more than " + max
                    + " (UTF-8): '" + Identifiers.escape(shortened(value)) + "'");
        }
    }

    /** The first 40 characters and a mark, so a reason stays short whatever the value. */
    static String shortened(String value) {
        if (value == null) {
            return "null";
        }
        return value.length() <= 40 ? value : value.substring(0, 40) + "\u2026 (" + value.length() + " characters)";
    }

    /** {@code value} (an id, a key part: not the text) has no control character ({@link Identifiers}); null passes. */
    private static void requireNoControl(String field, String value, String id) {
        if (value != null && Identifiers.hasControlCharacter(value)) {
            throw new InvalidNotificationException(field, "field " + field + " contains a control character: '"
                    + Identifiers.escape(shortened(value)) + "' (notification id " + Identifiers.escape(shortened(id)) + ")");
        }
    }

    /** {@code value} is a bot id ({@link Identifiers#isBotId}); the reason shows it escaped. */
    private static void requireBotId(String field, String value, String id) {
        if (!Identifiers.isBotId(value)) {
            throw new InvalidNotificationException(field, "field " + field + " '" + Identifiers.escape(shortened(value))
                    + "' is not a bot id: expected " + Identifiers.BOT_ID_RULE + " (notification id "
                    + Identifiers.escape(shortened(id)) + ")");
        }
    }

    private static long utf8Length(String s) {
        if (s == null) {
            return 0;
        }
        // Within the bounds the encoded copy is small; above them it is at most the record's own size.
        return s.getBytes(StandardCharsets.UTF_8).length;
    }
}
