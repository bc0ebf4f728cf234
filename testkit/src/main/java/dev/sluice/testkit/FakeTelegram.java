package dev.sluice.testkit;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fake Telegram Bot API server with Telegram's rate limits, for tests and the embedded demo.
 *
 * <p>Serves {@code POST /bot<token>/sendMessage} (and {@code getMe}) on 127.0.0.1 (or {@link FakeTelegramBuilder#bindAddress}) with bodies as
 * {@code application/json}, {@code application/x-www-form-urlencoded} (what pengrad's
 * java-telegram-bot-api sends for SendMessage) or {@code multipart/form-data}, and query parameters.
 * Answers have Telegram's shape: {@code {"ok":true,"result":{Message}}} or
 * {@code {"ok":false,"error_code":N,"description":"...","parameters":{...}}}.
 *
 * <p>Per bot (the token's id part, before {@code ':'}) it enforces {@link FakeTelegramLimits} through
 * {@link TelegramLimiter}: excess gets 429 {@code Too Many Requests: retry after N} with
 * {@code parameters.retry_after = N}, and a call during a penalty extends it. Chats marked with
 * {@link #blockChat} get 403 {@code Forbidden: bot was blocked by the user}; a 403 spends budget like a
 * delivered message (DESIGN.md), so it is counted by the limiter but not listed in {@link #accepted()}.
 * Tests switch answers per chat or per bot with {@link #enqueueForChat} / {@link #enqueueForBot}
 * ({@link TelegramBehaviour}).
 *
 * <p>Also serves {@code sendPhoto}, {@code sendDocument}, {@code sendVideo}, {@code sendAnimation}, {@code sendAudio},
 * {@code editMessageText}, {@code editMessageCaption}, {@code editMessageReplyMarkup} and {@code deleteMessage}, validated as
 * Telegram does ({@link FakeTelegramMethods}); every method spends the same per-chat, per-group and per-bot limits, and
 * edits and deletes act on the message ids the fake issued ({@link FakeMessageStore}, {@link #message}).
 *
 * <p>Every accepted call is recorded as {@link FakeTelegramAccepted} (with its method; an edit or delete with the id it acted on). <b>Tokens are never stored, logged or
 * returned</b>: only the bot id is kept (and, with {@link FakeTelegramBuilder#requireToken}, a SHA-256 hash).
 *
 * <p>This class is the switches and observations for tests; the HTTP server and its routing are {@link FakeTelegramHttp}'s,
 * requests are parsed by {@link FakeTelegramRequests}, the methods' handlers and validation are
 * {@link FakeTelegramMethods}'s; options are {@link FakeTelegramBuilder}'s, and what it records is
 * {@link FakeTelegramCall}, {@link FakeTelegramAccepted} and {@link FakeTelegramMessage}. Thread ownership: the server's
 * threads answer requests; every mutable field but the request counter is guarded by one lock, the methods' ({@code lock}
 * below is the same object, as are the collections shared with it).
 *
 * <p>Give pengrad {@link #apiUrl()}: {@code new TelegramBot.Builder(token).apiUrl(fake.apiUrl()).build()}
 * (pengrad appends {@code <token>/<method>}).
 */
public final class FakeTelegram implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FakeTelegram.class);
    private static final Pattern USERNAME = Pattern.compile("^@[A-Za-z][A-Za-z0-9_]{3,31}$");
    /** Telegram's limit on sendMessage text, in characters after entity parsing (Bot API: 1-4096). */
    public static final int MAX_TEXT_LENGTH = 4096;
    static final String ANY_BOT = "*";

    private final Clock clock;
    private final FakeTelegramLimits limits;

    private final FakeTelegramMethods methods;
    // the methods' lock and state, the same objects (guarded by lock)
    private final Object lock;
    private final TelegramLimiter limiter;
    private final List<FakeTelegramAccepted> accepted;
    private final Map<String, ArrayDeque<TelegramBehaviour>> queued;
    private final Map<String, TelegramBehaviour> chatStates;
    private final Map<String, Long> rejected429ByBot;
    private final Map<TelegramLimiter.Scope, Long> rejected429ByScope;
    private final Map<String, Long> paidBroadcastRequests;
    private final Map<Integer, Long> responsesByStatus;
    private final FakeMessageStore messages;
    private final FakeTelegramHttp http;

    FakeTelegram(FakeTelegramBuilder b) throws IOException {
        this.clock = b.clock;
        this.limits = b.limits;
        this.methods = new FakeTelegramMethods(b.limits, b.clock);
        this.lock = methods.lock;
        this.limiter = methods.limiter;
        this.accepted = methods.accepted;
        this.queued = methods.queued;
        this.chatStates = methods.chatStates;
        this.rejected429ByBot = methods.rejected429ByBot;
        this.rejected429ByScope = methods.rejected429ByScope;
        this.paidBroadcastRequests = methods.paidBroadcastRequests;
        this.responsesByStatus = methods.responsesByStatus;
        this.messages = methods.messages;
        this.http = new FakeTelegramHttp(methods, b);
        LOG.info("FakeTelegram listening on {}:{} with {}", b.bindAddress.getHostAddress(), port(), limits);
    }

    /** Starts with {@link FakeTelegramLimits#telegram()}, the system clock and 32 threads on a free port. */
    public static FakeTelegram start() {
        return builder().start();
    }

    /** Starts with {@code limits}, the system clock and 32 threads on a free port. */
    public static FakeTelegram start(FakeTelegramLimits limits) {
        return builder().limits(limits).start();
    }

    /** Starts with {@code limits} on {@code port} (0 = any free port), the system clock and 32 threads. */
    public static FakeTelegram start(int port, FakeTelegramLimits limits) {
        return builder().port(port).limits(limits).start();
    }

    public static FakeTelegramBuilder builder() {
        return new FakeTelegramBuilder();
    }

    // ---------------------------------------------------------------- addresses

    /** The server root, {@code http://127.0.0.1:PORT}. */
    public String url() {
        return "http://127.0.0.1:" + port();
    }

    /** The base URL for Bot API clients, {@code http://127.0.0.1:PORT/bot}; the client appends {@code <token>/<method>}. */
    public String apiUrl() {
        return url() + "/bot";
    }

    public int port() {
        return http.port();
    }

    public FakeTelegramLimits limits() {
        return limits;
    }

    /** The id part of a bot token (before {@code ':'}), the only part FakeTelegram keeps. */
    public static String botIdOf(String token) {
        java.util.Objects.requireNonNull(token, "token");
        int colon = token.indexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("token: not of the form <bot id>:<secret>");
        }
        return token.substring(0, colon);
    }

    // ---------------------------------------------------------------- switches for tests

    // A caller may pass a whole token where a bot id is expected; keep only the id part.
    private static String bot(String botIdOrToken) {
        java.util.Objects.requireNonNull(botIdOrToken, "botId");
        int colon = botIdOrToken.indexOf(':');
        return colon < 0 ? botIdOrToken : botIdOrToken.substring(0, colon);
    }

    /** Every bot's sends to {@code chatId} get 403 {@code Forbidden: bot was blocked by the user} until unblocked. */
    public void blockChat(String chatId) {
        setChatState(ANY_BOT, chatId, new TelegramBehaviour.Blocked());
    }

    /** Sends of bot {@code botId} to {@code chatId} get 403 {@code Forbidden: bot was blocked by the user}. */
    public void blockChat(String botId, String chatId) {
        setChatState(bot(botId), chatId, new TelegramBehaviour.Blocked());
    }

    /** Every bot's sends to {@code chatId} get 403 {@code Forbidden: user is deactivated}. */
    public void deactivateChat(String chatId) {
        setChatState(ANY_BOT, chatId, new TelegramBehaviour.Deactivated());
    }

    /** Undoes {@link #blockChat(String)} / {@link #deactivateChat(String)} for every bot. */
    public void unblockChat(String chatId) {
        synchronized (lock) {
            String chat = normaliseChatId(chatId);
            chatStates.keySet().removeIf(k -> k.endsWith("|" + chat));
        }
    }

    /** Undoes {@link #blockChat(String, String)}: bot {@code botId} may send to {@code chatId} again. */
    public void unblockChat(String botId, String chatId) {
        synchronized (lock) {
            chatStates.remove(key(bot(botId), normaliseChatId(chatId)));
        }
    }

    private void setChatState(String botId, String chatId, TelegramBehaviour state) {
        synchronized (lock) {
            chatStates.put(key(botId, normaliseChatId(chatId)), state);
        }
    }

    /** The next request (of any bot) to {@code chatId} gets {@code behaviour} instead of the normal answer. */
    public void enqueueForChat(String chatId, TelegramBehaviour behaviour) {
        enqueue(key(ANY_BOT, normaliseChatId(chatId)), behaviour, 1);
    }

    /** The next {@code times} requests of bot {@code botId} to {@code chatId} get {@code behaviour}. */
    public void enqueueForChat(String botId, String chatId, TelegramBehaviour behaviour, int times) {
        enqueue(key(bot(botId), normaliseChatId(chatId)), behaviour, times);
    }

    /**
     * The next {@code times} requests of bot {@code botId} (to any chat) get {@code behaviour}; a
     * {@link TelegramBehaviour.TooManyRequests} here opens a bot-wide penalty.
     */
    public void enqueueForBot(String botId, TelegramBehaviour behaviour, int times) {
        enqueue(key(bot(botId), ANY_BOT), behaviour, times);
    }

    private void enqueue(String key, TelegramBehaviour behaviour, int times) {
        java.util.Objects.requireNonNull(behaviour, "behaviour");
        if (times < 1) {
            throw new IllegalArgumentException("times: must be >= 1, was " + times);
        }
        synchronized (lock) {
            ArrayDeque<TelegramBehaviour> q = queued.computeIfAbsent(key, k -> new ArrayDeque<>());
            for (int i = 0; i < times; i++) {
                q.addLast(behaviour);
            }
        }
    }

    /**
     * Requests of {@code botId} that passed the limits carrying {@code allow_paid_broadcast=true}: only these may
     * exceed {@code globalPerSecond}, up to {@link TelegramLimiter#PAID_BROADCAST_PER_SECOND} per second.
     */
    public long paidBroadcastRequests(String botId) {
        synchronized (lock) {
            return paidBroadcastRequests.getOrDefault(bot(botId), 0L);
        }
    }

    /** Forgets accepted messages, counters, limiter state, queued behaviours and blocked chats. */
    public void reset() {
        synchronized (lock) {
            paidBroadcastRequests.clear();
            accepted.clear();
            http.calls.clear();
            queued.clear();
            chatStates.clear();
            rejected429ByBot.clear();
            rejected429ByScope.clear();
            responsesByStatus.clear();
            limiter.reset();
            messages.clear();
            http.requests.set(0);
        }
    }

    // ---------------------------------------------------------------- observations

    /** A snapshot of every {@code sendMessage} request with its answer, in arrival order. */
    public List<FakeTelegramCall> calls() {
        synchronized (lock) {
            return List.copyOf(http.calls);
        }
    }

    /** The {@code sendMessage} requests to {@code chatId} (any bot), in arrival order. */
    public List<FakeTelegramCall> callsFor(String chatId) {
        String chat = normaliseChatId(chatId);
        synchronized (lock) {
            return http.calls.stream().filter(c -> chat.equals(c.chatId())).toList();
        }
    }

    /** The message {@code messageId} this fake issued to {@code chatId} for bot {@code botId} (the token's id), as it is now. */
    public java.util.Optional<FakeTelegramMessage> message(String botId, String chatId, long messageId) {
        synchronized (lock) {
            return java.util.Optional.ofNullable(messages.get(key(bot(botId), normaliseChatId(chatId)), messageId));
        }
    }

    /** A snapshot of every accepted message, in acceptance order. */
    public List<FakeTelegramAccepted> accepted() {
        synchronized (lock) {
            return List.copyOf(accepted);
        }
    }

    /** Accepted messages to {@code chatId} (any bot), in acceptance order. */
    public List<FakeTelegramAccepted> acceptedFor(String chatId) {
        String chat = normaliseChatId(chatId);
        synchronized (lock) {
            return accepted.stream().filter(a -> a.chatId().equals(chat)).toList();
        }
    }

    /** HTTP requests received (any path, any answer). */
    public long requestCount() {
        return http.requests.get();
    }

    /** 429 answers given, all bots. */
    public long rejected429Count() {
        synchronized (lock) {
            return rejected429ByBot.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    /** 429 answers given to bot {@code botId} (a whole token is reduced to its id part). */
    public long rejected429Count(String botId) {
        synchronized (lock) {
            return rejected429ByBot.getOrDefault(bot(botId), 0L);
        }
    }

    /**
     * 429 answers given, all bots, by the scope that refused: the rule a call broke ({@code BOT}: the bot's sliding
     * second, {@code CHAT}, {@code GROUP}) or the penalty it met (a call during a penalty counts under the penalty's
     * scope and extends it). Scopes without a 429 are absent.
     */
    public Map<TelegramLimiter.Scope, Long> rejected429ByScope() {
        synchronized (lock) {
            return Map.copyOf(rejected429ByScope);
        }
    }

    /** Answers given with HTTP {@code status} (e.g. 200, 400, 403, 429, 502). */
    public long responseCount(int status) {
        synchronized (lock) {
            return responsesByStatus.getOrDefault(status, 0L);
        }
    }

    /** The most messages any one bot had accepted within any sliding {@code window}. */
    public int maxBotMessagesPer(Duration window) {
        return SlidingWindows.maxPerKey(accepted(), a -> a.botId(), FakeTelegramAccepted::acceptedAtMillis, window.toMillis());
    }

    /** The most messages any one chat (per bot) had accepted within any sliding {@code window}. */
    public int maxChatMessagesPer(Duration window) {
        return SlidingWindows.maxPerKey(accepted(), a -> a.botId() + "|" + a.chatId(), FakeTelegramAccepted::acceptedAtMillis,
                window.toMillis());
    }

    /** The most messages any one group chat (negative id or {@code @username}, per bot) had accepted within any sliding {@code window}. */
    public int maxGroupMessagesPer(Duration window) {
        List<FakeTelegramAccepted> groups = accepted().stream().filter(a -> TelegramLimiter.isGroup(a.chatId())).toList();
        return SlidingWindows.maxPerKey(groups, a -> a.botId() + "|" + a.chatId(), FakeTelegramAccepted::acceptedAtMillis,
                window.toMillis());
    }

    /**
     * The largest number of {@code timesMillis} that fit in one sliding window of {@code windowMillis}
     * (times {@code a <= b} share a window iff {@code b - a < windowMillis}). O(n) two pointers on sorted
     * input; unsorted input is sorted first (a copy).
     *
     * @throws IllegalArgumentException if {@code windowMillis < 1}
     */
    public static int maxPerSlidingWindow(List<Long> timesMillis, long windowMillis) {
        return SlidingWindows.maxPerWindow(timesMillis, windowMillis);
    }

    /**
     * Normalises a chat id: a decimal integer (no leading zeros, sign only when negative) or
     * {@code @username}.
     *
     * @throws IllegalArgumentException if it is neither
     */
    static String normaliseChatId(String chatId) {
        String s = chatId.trim();
        if (s.startsWith("@")) {
            if (!USERNAME.matcher(s).matches()) {
                throw new IllegalArgumentException("chat_id: not a number or @username");
            }
            return s;
        }
        long id;
        try {
            id = Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("chat_id: not a number or @username", e);
        }
        if (id == 0) {
            throw new IllegalArgumentException("chat_id: 0 is no chat");
        }
        return Long.toString(id);
    }

    static String key(String botId, String chatId) {
        return botId + "|" + chatId;
    }

    /** Stops the server (stalled answers are released) and its threads. Idempotent. */
    @Override
    public void close() {
        http.close();
    }

    @Override
    public String toString() {
        synchronized (lock) {
            return "FakeTelegram[" + url() + ", accepted=" + accepted.size() + ", requests=" + http.requests.get() + "]";
        }
    }
}
