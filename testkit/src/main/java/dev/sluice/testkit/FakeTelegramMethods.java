package dev.sluice.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The Bot API methods a {@link FakeTelegram} serves ({@code sendMessage}, {@code sendPhoto}, {@code sendDocument},
 * {@code sendVideo}, {@code sendAnimation}, {@code sendAudio}, {@code editMessageText}, {@code editMessageCaption},
 * {@code editMessageReplyMarkup}, {@code deleteMessage}; issue 20): each call is validated as Telegram does (answering
 * with Telegram's descriptions), then meets the queued behaviours, the limits of {@link TelegramLimiter} (every method
 * spends the same per-chat, per-group and per-bot limits) and blocked chats, and is applied to the messages issued
 * ({@link FakeMessageStore}); the answer has Telegram's JSON shape.
 *
 * <p>Thread ownership: every mutable field is guarded by {@link #lock}. FakeTelegram's server threads call
 * {@link #call}; FakeTelegram's switches and observations read and change the same fields under the same lock.
 */
final class FakeTelegramMethods {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Telegram's caption limit (sendPhoto ..., editMessageCaption). */
    static final int MAX_CAPTION_LENGTH = 1024;
    static final int MAX_CALLBACK_DATA_BYTES = 64;
    static final int MAX_BUTTONS = 100;
    static final Map<String, String> MEDIA_PARAMETER = Map.of("sendphoto", "photo", "senddocument", "document",
            "sendvideo", "video", "sendanimation", "animation", "sendaudio", "audio");
    static final Set<String> EDITS = Set.of("editmessagetext", "editmessagecaption", "editmessagereplymarkup");

    final Object lock = new Object();
    final TelegramLimiter limiter;
    final List<FakeTelegramAccepted> accepted = new ArrayList<>();
    final Map<String, ArrayDeque<TelegramBehaviour>> queued = new HashMap<>();
    final Map<String, TelegramBehaviour> chatStates = new HashMap<>();
    final Map<String, Long> rejected429ByBot = new HashMap<>();
    /** The scope of each 429 answered (the refusing rule, or the penalty a call met), counted. */
    final Map<TelegramLimiter.Scope, Long> rejected429ByScope = new java.util.EnumMap<>(TelegramLimiter.Scope.class);
    /** Bot id → requests that passed carrying allow_paid_broadcast=true. */
    final Map<String, Long> paidBroadcastRequests = new HashMap<>();
    final Map<Integer, Long> responsesByStatus = new HashMap<>();
    final FakeMessageStore messages = new FakeMessageStore();
    private final Clock clock;

    FakeTelegramMethods(FakeTelegramLimits limits, Clock clock) {
        this.limiter = new TelegramLimiter(limits);
        this.clock = clock;
    }

    /** An answer: HTTP status and JSON body, or a dropped connection, or one held back (stalled) first. */
    static final class Answer {
        final int status;
        final ObjectNode body;
        boolean dropConnection;
        Duration stall;

        Answer(int status, ObjectNode body) {
            this.status = status;
            this.body = body;
        }
    }

    /** Answers one call of a send, edit or delete method (lower-case {@code method}) to its chat. */
    Answer call(String botId, String method, String methodName, Map<String, String> params) {
        String rawChat = params.get("chat_id");
        if (rawChat == null || rawChat.isBlank()) {
            return error(400, "Bad Request: chat_id is empty", null);
        }
        String chatId;
        try {
            chatId = FakeTelegram.normaliseChatId(rawChat);
        } catch (IllegalArgumentException e) {
            return error(400, "Bad Request: chat not found", null);
        }
        String text = params.get("text");
        if (method.equals("sendmessage")) {
            if (text == null || text.isBlank()) {
                return error(400, "Bad Request: message text is empty", null);
            }
            if (text.length() > FakeTelegram.MAX_TEXT_LENGTH) {
                return error(400, "Bad Request: message is too long", null);
            }
        }
        String invalid = invalid(method, params);
        if (invalid != null) {
            return error(400, invalid, null);
        }
        synchronized (lock) {
            long now = clock.millis();
            Forced forced = pollBehaviour(botId, chatId);
            Duration stall = null;
            boolean dropAfter = false;
            if (forced != null && forced.behaviour() instanceof TelegramBehaviour.AcceptThenStall s) {
                stall = s.stall();
            } else if (forced != null && forced.behaviour() instanceof TelegramBehaviour.AcceptThenDrop) {
                dropAfter = true;
            } else if (forced != null) {
                return forcedAnswer(forced.behaviour(), forced.botWide(), botId, chatId, now);
            }
            boolean paid = Boolean.parseBoolean(params.getOrDefault("allow_paid_broadcast", "false").trim());
            TelegramLimiter.Decision decision = limiter.tryAcquire(botId, chatId, now, paid);
            if (!decision.accepted()) {
                return tooManyRequests(botId, decision.scope(), decision.retryAfterSeconds());
            }
            if (paid) {
                paidBroadcastRequests.merge(botId, 1L, Long::sum);
            }
            TelegramBehaviour state = chatStates.getOrDefault(FakeTelegram.key(botId, chatId),
                    chatStates.get(FakeTelegram.key(FakeTelegram.ANY_BOT, chatId)));
            if (state != null) {
                return forcedAnswer(state, false, botId, chatId, now);
            }
            String mediaParameter = MEDIA_PARAMETER.get(method);
            boolean changes = EDITS.contains(method) || method.equals("deletemessage");
            Answer answer;
            if (changes) {
                // the call spent the limits above whatever its answer, as Telegram counts it
                Object applied = messages.apply(FakeTelegram.key(botId, chatId), method, params);
                if (applied instanceof String description) {
                    return error(400, description, null);
                }
                FakeTelegramMessage m = (FakeTelegramMessage) applied;
                accepted.add(new FakeTelegramAccepted(botId, chatId, m.deleted() || m.text() == null ? "" : m.text(), now, m.messageId(), methodName));
                if (m.deleted()) {
                    answer = okTrue();
                } else {
                    answer = ok(message(botId, chatId, m.text() == null ? "" : m.text(), now, m.messageId()));
                }
            } else {
                String shown = mediaParameter == null ? text : params.getOrDefault("caption", "");
                long messageId = messages.nextId(FakeTelegram.key(botId, chatId));
                messages.issued(FakeTelegram.key(botId, chatId), new FakeTelegramMessage(botId, chatId, messageId, methodName, shown,
                        mediaParameter, mediaParameter == null ? null : params.get(mediaParameter), params.get("reply_markup"),
                        Boolean.parseBoolean(params.get("disable_notification")), Boolean.parseBoolean(params.get("protect_content")),
                        params.get("message_thread_id") == null ? null : Long.valueOf(params.get("message_thread_id").trim()), false,
                        linkPreviewDisabled(params)));
                accepted.add(new FakeTelegramAccepted(botId, chatId, shown, now, messageId, methodName));
                answer = ok(message(botId, chatId, shown, now, messageId));
            }
            answer.stall = stall;
            answer.dropConnection = dropAfter; // accepted and recorded: only the answer is lost
            return answer;
        }
    }

    /** A queued behaviour and whether it was queued for the whole bot (a 429 then penalises the bot). */
    private record Forced(TelegramBehaviour behaviour, boolean botWide) {
    }

    // under lock; most specific queue first
    private Forced pollBehaviour(String botId, String chatId) {
        for (String key : List.of(FakeTelegram.key(botId, chatId), FakeTelegram.key(FakeTelegram.ANY_BOT, chatId),
                FakeTelegram.key(botId, FakeTelegram.ANY_BOT))) {
            ArrayDeque<TelegramBehaviour> q = queued.get(key);
            if (q != null && !q.isEmpty()) {
                return new Forced(q.pollFirst(), key.endsWith("|" + FakeTelegram.ANY_BOT));
            }
        }
        return null;
    }

    // under lock
    private Answer forcedAnswer(TelegramBehaviour behaviour, boolean botWide, String botId, String chatId, long now) {
        if (behaviour instanceof TelegramBehaviour.TooManyRequests t) {
            TelegramLimiter.Decision d = limiter.penalise(botId, botWide ? null : chatId, t.retryAfter().toSeconds(), now);
            return tooManyRequests(botId, d.scope(), d.retryAfterSeconds());
        }
        if (behaviour instanceof TelegramBehaviour.Blocked) {
            return error(403, "Forbidden: bot was blocked by the user", null);
        }
        if (behaviour instanceof TelegramBehaviour.Deactivated) {
            return error(403, "Forbidden: user is deactivated", null);
        }
        if (behaviour instanceof TelegramBehaviour.ChatNotFound) {
            return error(400, "Bad Request: chat not found", null);
        }
        if (behaviour instanceof TelegramBehaviour.MigrateToChat m) {
            ObjectNode p = JSON.createObjectNode().put("migrate_to_chat_id", m.newChatId());
            return error(400, "Bad Request: group chat was upgraded to a supergroup chat", p);
        }
        if (behaviour instanceof TelegramBehaviour.ServerError s) {
            return error(s.status(), s.status() == 502 ? "Bad Gateway" : "Internal Server Error", null);
        }
        if (behaviour instanceof TelegramBehaviour.DropConnection) {
            Answer a = new Answer(0, null);
            a.dropConnection = true;
            return a;
        }
        throw new IllegalStateException("unhandled behaviour " + behaviour);
    }

    private Answer tooManyRequests(String botId, TelegramLimiter.Scope scope, long retryAfterSeconds) {
        rejected429ByBot.merge(botId, 1L, Long::sum);
        rejected429ByScope.merge(scope, 1L, Long::sum);
        ObjectNode p = JSON.createObjectNode().put("retry_after", retryAfterSeconds);
        return error(429, "Too Many Requests: retry after " + retryAfterSeconds, p);
    }

    /** {@code {"ok":true,"result":true}}: what deleteMessage answers. */
    private Answer okTrue() {
        ObjectNode body = JSON.createObjectNode();
        body.put("ok", true);
        body.put("result", true);
        count(200);
        return new Answer(200, body);
    }

    Answer ok(ObjectNode result) {
        ObjectNode body = JSON.createObjectNode();
        body.put("ok", true);
        body.set("result", result);
        count(200);
        return new Answer(200, body);
    }

    Answer error(int status, String description, ObjectNode parameters) {
        ObjectNode body = JSON.createObjectNode();
        body.put("ok", false);
        body.put("error_code", status);
        body.put("description", description);
        if (parameters != null) {
            body.set("parameters", parameters);
        }
        count(status);
        return new Answer(status, body);
    }

    private void count(int status) {
        synchronized (lock) {
            responsesByStatus.merge(status, 1L, Long::sum);
        }
    }

    static ObjectNode getMe(String botId) {
        ObjectNode user = JSON.createObjectNode();
        user.put("id", Long.parseLong(botId));
        user.put("is_bot", true);
        user.put("first_name", "Fake Bot " + botId);
        user.put("username", "fake_" + botId + "_bot");
        return user;
    }

    private static ObjectNode message(String botId, String chatId, String text, long nowMillis, long messageId) {
        ObjectNode chat = JSON.createObjectNode();
        if (chatId.startsWith("@")) {
            chat.put("id", -1_000_000_000_000L - (chatId.hashCode() & 0x7fffffffL));
            chat.put("type", "channel");
            chat.put("title", chatId.substring(1));
            chat.put("username", chatId.substring(1));
        } else {
            long id = Long.parseLong(chatId);
            chat.put("id", id);
            if (id > 0) {
                chat.put("type", "private");
                chat.put("first_name", "User " + id);
            } else {
                chat.put("type", chatId.startsWith("-100") ? "supergroup" : "group");
                chat.put("title", "Group " + id);
            }
        }
        ObjectNode msg = JSON.createObjectNode();
        msg.put("message_id", messageId);
        msg.set("from", getMe(botId));
        msg.put("date", nowMillis / 1000);
        msg.set("chat", chat);
        msg.put("text", text);
        return msg;
    }

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
}
