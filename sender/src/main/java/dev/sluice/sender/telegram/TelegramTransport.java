package dev.sluice.sender.telegram;

import com.pengrad.telegrambot.TelegramBot;
import com.pengrad.telegrambot.model.request.ParseMode;
import com.pengrad.telegrambot.request.SendMessage;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.sender.provider.BotToken;
import dev.sluice.sender.provider.SendOutcome;
import dev.sluice.sender.provider.Transport;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import okhttp3.ConnectionPool;
import okhttp3.Interceptor;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * Telegram Bot API {@code sendMessage} (and, for an {@link OutboundMessage}, the media, edit and delete methods:
 * {@link TelegramRequests}) as pengrad java-telegram-bot-api requests, called through {@link BotApiCall} (the same POST as
 * pengrad's; the answer read for the classified fields only) or, with a file, through pengrad: one {@link TelegramBot}
 * per token, all built with the configured API URL and one shared OkHttp client with bounded timeouts, whose pool keeps
 * one idle connection per sending thread (a call finds a kept-alive connection instead of connecting anew).
 *
 * <p>Classification: ok → {@link SendOutcome.Delivered}; 429 → {@link SendOutcome.RetryAfter} with
 * {@code parameters.retry_after}; 401, 404 → {@link SendOutcome.TokenRejected} (revoked or malformed token);
 * 403 → {@link SendOutcome.Blocked}; 400 with
 * {@code migrate_to_chat_id} → {@link SendOutcome.ChatMigrated}; other 4xx →
 * {@link SendOutcome.PermanentFailure}; 5xx and I/O errors → {@link SendOutcome.TransientFailure}.
 * The token goes only into the URL of a call (never a log line or an outcome): descriptions and exception texts are redacted.
 *
 * <p>Thread: called by every sending thread at once; its state (clients, tokens, connection pool) is built in the
 * constructor and only read afterwards (OkHttp's pool is thread-safe).
 */
public final class TelegramTransport implements Transport {
    private static final MediaType JSON = MediaType.parse("application/json");
    /** Telegram's 429 always carries retry_after; if a proxy strips it, wait this long. */
    static final Duration DEFAULT_RETRY_AFTER = Duration.ofSeconds(1);
    /** Idle connections kept without an explicit count: sender.max.in.flight's default. */
    static final int DEFAULT_IDLE_CONNECTIONS = 16;

    private final OkHttpClient http;
    private final Map<String, TelegramBot> bots = new LinkedHashMap<>();
    private final Map<String, BotToken> tokens;
    /** Bot id → {@code <api url><token>/}, the base of its calls through {@link #api} (never logged). */
    private final Map<String, String> botUrls = new java.util.HashMap<>();
    private final BotApiCall api;
    /** Bots configured {@code bot.<id>.paid.broadcast=true}: their sends carry {@code allow_paid_broadcast=true}. */
    private final java.util.Set<String> paidBroadcastBots;

    /**
     * @param apiUrl         pengrad apiUrl form, e.g. {@code https://api.telegram.org/bot}
     * @param tokens         logical bot id → token
     * @param connectTimeout TCP connect bound
     * @param requestTimeout bound on the whole call
     */
    public TelegramTransport(String apiUrl, Map<String, BotToken> tokens, Duration connectTimeout,
                             Duration requestTimeout) {
        this(apiUrl, tokens, connectTimeout, requestTimeout, java.util.Set.of());
    }

    /**
     * @param paidBroadcastBots bots whose sends carry {@code allow_paid_broadcast=true} (Telegram then allows up to
     *                          1000 messages per second for a fee; {@code bot.<id>.paid.broadcast=true})
     */
    public TelegramTransport(String apiUrl, Map<String, BotToken> tokens, Duration connectTimeout,
                             Duration requestTimeout, java.util.Set<String> paidBroadcastBots) {
        this(apiUrl, tokens, connectTimeout, requestTimeout, paidBroadcastBots, DEFAULT_IDLE_CONNECTIONS);
    }

    /**
     * @param idleConnections kept-alive connections the pool holds between calls: the sending threads
     *                        ({@code sender.max.in.flight}) call at once, so fewer than that closes connections after
     *                        each burst and opens new ones for the next (OkHttp's default keeps 5)
     */
    public TelegramTransport(String apiUrl, Map<String, BotToken> tokens, Duration connectTimeout,
                             Duration requestTimeout, java.util.Set<String> paidBroadcastBots, int idleConnections) {
        this.tokens = Map.copyOf(tokens);
        this.paidBroadcastBots = java.util.Set.copyOf(paidBroadcastBots);
        this.http = new OkHttpClient.Builder()
                .connectTimeout(connectTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .readTimeout(requestTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .writeTimeout(requestTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .callTimeout(requestTimeout.toMillis(), TimeUnit.MILLISECONDS)
                // No silent resend by OkHttp after a dropped connection: the sender decides (backoff, breaker).
                .retryOnConnectionFailure(false)
                .eventListener(new RequestWriteEvents()) // a timeout before the request's first byte is not UNCERTAIN
                .connectionPool(new ConnectionPool(idleConnections, 5, TimeUnit.MINUTES))
                .addInterceptor(TelegramTransport::nonJsonErrorsAsBotApiErrors)
                .build();
        tokens.forEach((botId, token) -> bots.put(botId,
                new TelegramBot.Builder(token.reveal()).apiUrl(apiUrl).okHttpClient(http).build()));
        tokens.forEach((botId, token) -> botUrls.put(botId, apiUrl + token.reveal() + "/")); // as pengrad's base URL
        this.api = new BotApiCall(http);
    }

    @Override
    public SendOutcome send(String botId, String chatId, String text, String parseMode) {
        TelegramBot bot = bot(botId);
        SendMessage request = new SendMessage(chatId, text);
        ParseMode mode = parseMode(parseMode);
        if (mode != null) {
            request.parseMode(mode);
        }
        if (paidBroadcastBots.contains(botId)) {
            request.allowPaidBroadcast(true);
        }
        BotApiCall.Reply response;
        try {
            response = execute(botId, bot, request);
        } catch (RuntimeException e) {
            return failed(e, tokens.get(botId));
        }
        return classify(response, tokens.get(botId));
    }

    /**
     * A request without a file through {@link BotApiCall} (the same POST, a lighter read of the answer); one with a
     * file through pengrad.
     *
     * @throws RuntimeException as pengrad's {@code execute}: an I/O error as the cause of an unchecked exception
     */
    private BotApiCall.Reply execute(String botId, TelegramBot bot, com.pengrad.telegrambot.request.BaseRequest<?, ?> request) {
        if (request.isMultipart()) {
            return BotApiCall.Reply.of(bot.execute(request));
        }
        try {
            return api.call(botUrls.get(botId), request);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * The Bot API method {@code message} needs ({@link TelegramRequests}). An edit or delete acts on
     * {@code target_provider_message_id}; without it (the topology could not find the earlier message) it ends as a
     * permanent failure without a call. Answers: an edit whose content is unchanged ("message is not modified") is
     * {@link SendOutcome.Delivered} with the edited message's id (the chat shows what was asked); "message to edit not
     * found" and "message to delete not found" are {@link SendOutcome.PermanentFailure} (result FAILED with that reason).
     */
    @Override
    public SendOutcome send(String botId, String chatId, OutboundMessage message) {
        TelegramBot bot = bot(botId);
        BotToken token = tokens.get(botId);
        boolean editOrDelete = message.getEditOf() != null || message.getDeleteOf() != null;
        Long target = message.getTargetProviderMessageId();
        if (editOrDelete && (target == null || target <= 0 || target > Integer.MAX_VALUE)) {
            return new SendOutcome.PermanentFailure(400, TelegramRequests.methodOf(message) + ": no provider message id of "
                    + (message.getEditOf() != null ? "edit_of " + message.getEditOf() : "delete_of " + message.getDeleteOf())
                    + " (target_provider_message_id " + target + "); not called");
        }
        ParseMode mode = parseMode(message.getParseMode());
        // a plain sendMessage (the hot path) goes without a pengrad request object: the same parameters, same POST
        Map<String, Object> plain = TelegramRequests.sendMessageParams(message, chatId, mode, paidBroadcastBots.contains(botId));
        BotApiCall.Reply response;
        try {
            response = plain != null ? execute(botId, "sendMessage", plain) : execute(botId, bot, request(botId, message,
                    chatId, mode, target));
        } catch (RuntimeException e) {
            return failed(e, token);
        }
        if (editOrDelete && response != null && !response.ok() && response.errorCode() == 400
                && response.description() != null && response.description().contains("message is not modified")) {
            return new SendOutcome.Delivered(target);
        }
        SendOutcome outcome = classify(response, token);
        if (editOrDelete && outcome instanceof SendOutcome.Delivered) {
            return new SendOutcome.Delivered(target); // edits and deletes answer true or the message: the id is the target's
        }
        return outcome;
    }

    private com.pengrad.telegrambot.request.BaseRequest<?, ?> request(String botId, OutboundMessage message, String chatId,
                                                                      ParseMode mode, Long target) {
        var request = TelegramRequests.request(message, chatId, mode, target == null ? 0 : target.intValue());
        if (paidBroadcastBots.contains(botId) && request instanceof com.pengrad.telegrambot.request.AbstractSendRequest<?> send) {
            send.allowPaidBroadcast(true); // sends only: edits and deletes have no such parameter
        }
        return request;
    }

    /** A call without a file of {@code method} with its parameters, through {@link BotApiCall}. */
    private BotApiCall.Reply execute(String botId, String method, Map<String, Object> params) {
        try {
            return api.call(botUrls.get(botId), method, params);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private TelegramBot bot(String botId) {
        TelegramBot bot = bots.get(botId);
        if (bot == null) {
            throw new IllegalArgumentException("no token configured for bot '" + botId + "' (bot." + botId + ".token)");
        }
        return bot;
    }

    static SendOutcome classify(BotApiCall.Reply r, BotToken token) {
        if (r == null) {
            return new SendOutcome.TransientFailure(null, "empty response from the Bot API", true);
        }
        String description = token.redact(r.description());
        if (r.ok()) {
            Integer id = r.messageId();
            return new SendOutcome.Delivered(id == null ? 0 : id);
        }
        int code = r.errorCode();
        if (code == 429) {
            Integer seconds = r.retryAfter();
            Duration retryAfter = seconds == null || seconds < 0 ? DEFAULT_RETRY_AFTER : Duration.ofSeconds(seconds);
            return new SendOutcome.RetryAfter(retryAfter, SendOutcome.PenaltyScope.CHAT, description);
        }
        if (code == 401 || code == 404) {
            return new SendOutcome.TokenRejected(code, description); // every method of the bot answers the same
        }
        if (code == 403) {
            return new SendOutcome.Blocked(code, description);
        }
        if (code == 400 && r.migrateToChatId() != null) {
            return new SendOutcome.ChatMigrated(r.migrateToChatId(), description);
        }
        if (code >= 400 && code < 500) {
            return new SendOutcome.PermanentFailure(code, description);
        }
        return new SendOutcome.TransientFailure(code == 0 ? null : code, description, false);
    }

    /**
     * A call that ended without an answer, classified on the thread that made it ({@link RequestWriteEvents}). A
     * connection that ended on a pooled connection idle long enough to be stale is retried on a fresh one: the idle
     * connections are evicted, so the retry cannot take another stale one.
     */
    private SendOutcome failed(RuntimeException e, BotToken token) {
        SendOutcome outcome = classifyException(e, token);
        if (outcome instanceof SendOutcome.TransientFailure f && !f.maybeDelivered() && RequestWriteEvents.staleSuspect()) {
            http.connectionPool().evictAll();
        }
        return outcome;
    }

    /**
     * Maybe delivered (UNCERTAIN unless the class's policy resends): a read or call timeout after the request began
     * ({@link #isTimeoutAfterSending}), and any other failure after the request was written whole (an end of stream, a
     * reset: the provider may have accepted it and the answer was lost on the way) unless the connection was a pooled one
     * idle long enough to have been closed by the server before it read the request ({@link
     * RequestWriteEvents#staleSuspect}). Session 25: a connection dropped after the provider accepted was taken for a
     * connect error, and the message was sent five times and ended FAILED.
     */
    static SendOutcome classifyException(RuntimeException e, BotToken token) {
        Throwable cause = e.getCause() instanceof IOException io ? io : e;
        String description = cause.getClass().getSimpleName() + ": " + token.redact(String.valueOf(cause.getMessage()));
        boolean maybeDelivered = isTimeoutAfterSending(cause) ? RequestWriteEvents.startedWriting()
                : cause instanceof IOException && RequestWriteEvents.requestWritten() && !RequestWriteEvents.staleSuspect();
        return new SendOutcome.TransientFailure(null, description, maybeDelivered);
    }

    /**
     * A read or call timeout: the request was written and no answer came, so the provider may have accepted
     * it (UNCERTAIN) — when the call had begun writing its request ({@link RequestWriteEvents}, checked by the caller):
     * a call timeout while the call still waited for its connection sent nothing. A connect timeout or a refused
     * connection is a connect error: retried with backoff. (A reset or an end of stream: {@link #classifyException}.)
     */
    static boolean isTimeoutAfterSending(Throwable cause) {
        String message = cause.getMessage() == null ? "" : cause.getMessage().toLowerCase(java.util.Locale.ROOT);
        if (message.contains("connect timed out") || message.contains("failed to connect")) {
            return false;
        }
        return cause instanceof java.net.SocketTimeoutException
                || (cause instanceof java.io.InterruptedIOException && message.contains("timeout"));
    }

    private static ParseMode parseMode(String name) {
        if (name == null || name.isBlank()) {
            return null;
        }
        for (ParseMode m : ParseMode.values()) {
            if (m.name().equalsIgnoreCase(name.trim())) {
                return m;
            }
        }
        return null;
    }

    /**
     * A proxy or load balancer may answer 502/503 with an HTML page; pengrad would fail parsing it. Turn
     * such answers into the Bot API error shape so they classify by status code.
     */
    private static Response nonJsonErrorsAsBotApiErrors(Interceptor.Chain chain) throws IOException {
        Response response = chain.proceed(chain.request());
        if (response.isSuccessful()) {
            return response;
        }
        ResponseBody body = response.body();
        MediaType type = body == null ? null : body.contentType();
        if (type != null && "json".equalsIgnoreCase(type.subtype())) {
            return response;
        }
        if (body != null) {
            body.close();
        }
        String json = "{\"ok\":false,\"error_code\":" + response.code() + ",\"description\":\"HTTP " + response.code()
                + " from the Bot API endpoint\"}";
        return response.newBuilder().body(ResponseBody.create(json, JSON)).build();
    }

    @Override
    public void close() {
        bots.values().forEach(TelegramBot::shutdown);
        http.dispatcher().executorService().shutdown();
        http.connectionPool().evictAll();
    }

    @Override
    public String toString() {
        return "TelegramTransport{bots=" + bots.keySet() + "}";
    }
}
