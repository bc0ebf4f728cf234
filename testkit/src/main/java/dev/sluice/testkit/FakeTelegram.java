package dev.sluice.testkit;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fake Telegram Bot API server with Telegram's rate limits, for tests and the embedded demo.
 *
 * <p>Serves {@code POST /bot<token>/sendMessage} (and {@code getMe}) on 127.0.0.1 (or {@link Builder#bindAddress}) with bodies as
 * {@code application/json}, {@code application/x-www-form-urlencoded} (what pengrad's
 * java-telegram-bot-api sends for SendMessage) or {@code multipart/form-data}, and query parameters.
 * Answers have Telegram's shape: {@code {"ok":true,"result":{Message}}} or
 * {@code {"ok":false,"error_code":N,"description":"...","parameters":{...}}}.
 *
 * <p>Per bot (the token's id part, before {@code ':'}) it enforces {@link Limits} through
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
 * <p>Every accepted call is recorded as {@link Accepted} (with its method; an edit or delete with the id it acted on). <b>Tokens are never stored, logged or
 * returned</b>: only the bot id is kept (and, with {@link Builder#requireToken}, a SHA-256 hash).
 *
 * <p>This class is the HTTP server and its routing, and the switches and observations for tests; requests are parsed by
 * {@link FakeTelegramRequests}, the methods' handlers and validation are {@link FakeTelegramMethods}'s. Thread ownership: the server's threads answer
 * requests; every mutable field but the request counter is guarded by one lock, the methods' ({@code lock} below is the
 * same object, as are the collections shared with it).
 *
 * <p>Give pengrad {@link #apiUrl()}: {@code new TelegramBot.Builder(token).apiUrl(fake.apiUrl()).build()}
 * (pengrad appends {@code <token>/<method>}).
 */
public final class FakeTelegram implements AutoCloseable {
    static {
        JdkHttpServerNoDelay.enable(); // before this JVM's first HttpServer: no 40 ms Nagle stalls
    }


    private static final Logger LOG = LoggerFactory.getLogger(FakeTelegram.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern PATH = Pattern.compile("^/bot([^/]*)/([^/]+)/?$");
    private static final Pattern TOKEN = Pattern.compile("^(\\d{1,20}):[A-Za-z0-9_-]{1,100}$");
    private static final Pattern USERNAME = Pattern.compile("^@[A-Za-z][A-Za-z0-9_]{3,31}$");
    /** Telegram's limit on sendMessage text, in characters after entity parsing (Bot API: 1-4096). */
    public static final int MAX_TEXT_LENGTH = 4096;
    static final String ANY_BOT = "*";

    /**
     * Limits per bot, after the Telegram Bot API FAQ (about 30 messages/s overall, about 1 message/s per
     * chat with short bursts tolerated, at most 20 messages/min per group). Scale them down or up for
     * tests; {@link #telegram()} holds the published numbers.
     *
     * @param globalPerSecond accepted messages per bot in any sliding 1 s window, {@code >= 1}
     * @param chatPerSecond sustained rate per chat (GCRA emission interval {@code 1/chatPerSecond} s), {@code > 0}
     * @param chatBurst messages a chat may receive back to back before the rate applies, {@code >= 1}
     * @param groupPerMinute accepted messages per group chat (negative id or {@code @username}) in any
     *     sliding 60 s window, {@code >= 1}
     */
    public record Limits(int globalPerSecond, double chatPerSecond, int chatBurst, int groupPerMinute) {
        public Limits {
            if (globalPerSecond < 1) {
                throw new IllegalArgumentException("globalPerSecond: must be >= 1, was " + globalPerSecond);
            }
            if (!(chatPerSecond > 0) || Double.isInfinite(chatPerSecond)) {
                throw new IllegalArgumentException("chatPerSecond: must be > 0 and finite, was " + chatPerSecond);
            }
            if (chatBurst < 1) {
                throw new IllegalArgumentException("chatBurst: must be >= 1, was " + chatBurst);
            }
            if (groupPerMinute < 1) {
                throw new IllegalArgumentException("groupPerMinute: must be >= 1, was " + groupPerMinute);
            }
        }

        /** 30/s per bot, 1/s per chat with burst 3, 20/min per group. */
        public static Limits telegram() {
            return new Limits(30, 1.0, 3, 20);
        }

        /** Limits so high that nothing is refused (for tests of other behaviour). */
        public static Limits unlimited() {
            return new Limits(Integer.MAX_VALUE, 1_000_000.0, Integer.MAX_VALUE, Integer.MAX_VALUE);
        }

        public Limits withGlobalPerSecond(int value) {
            return new Limits(value, chatPerSecond, chatBurst, groupPerMinute);
        }

        public Limits withChatPerSecond(double value) {
            return new Limits(globalPerSecond, value, chatBurst, groupPerMinute);
        }

        public Limits withChatBurst(int value) {
            return new Limits(globalPerSecond, chatPerSecond, value, groupPerMinute);
        }

        public Limits withGroupPerMinute(int value) {
            return new Limits(globalPerSecond, chatPerSecond, chatBurst, value);
        }
    }

    /**
     * One message the fake accepted (answered 200).
     *
     * @param botId the token's id part (before {@code ':'}); never the token
     * @param chatId the chat id as sent, normalised (numeric ids without sign/space noise, or {@code @username})
     * @param text the message text
     * @param acceptedAtMillis the fake's clock when it accepted, epoch ms
     * @param messageId Telegram's message id, increasing per chat from 1
     */
    /**
     * One {@code sendMessage} request and the answer it got, in arrival order (accepted or not).
     *
     * @param botId the token's id part; never the token
     * @param chatId the chat id as sent (normalised when it is valid)
     * @param text the message text (null if none)
     * @param atMillis when the fake decided the answer, by its clock
     * @param status the HTTP status answered; 0 when the connection was dropped without an answer
     */
    public record Call(String botId, String chatId, String text, long atMillis, int status, String method) {
    }

    /**
     * An accepted call: {@code text} is the text or caption sent (empty for a delete or a markup edit), {@code messageId}
     * the id issued, or for an edit or delete the id it acted on; {@code method} as Telegram spells it.
     */
    public record Accepted(String botId, String chatId, String text, long acceptedAtMillis, long messageId, String method) {
    }

    /**
     * A message the fake issued, as it is now: {@code method} that sent it, {@code text} (or caption), {@code mediaType}
     * ({@code photo}, {@code document}, ...; null for text) and {@code media} (URL or file_id), {@code replyMarkup} as the
     * JSON sent (null for none), the send options, whether it was deleted, and whether link previews were disabled
     * ({@code link_preview_options.is_disabled} or the older {@code disable_web_page_preview}).
     */
    public record Message(String botId, String chatId, long messageId, String method, String text, String mediaType,
                          String media, String replyMarkup, boolean silent, boolean protectContent, Long threadId,
                          boolean deleted, boolean linkPreviewDisabled) {
        Message withText(String newText, String newMarkup) {
            return new Message(botId, chatId, messageId, method, newText, mediaType, media, newMarkup, silent, protectContent,
                    threadId, deleted, linkPreviewDisabled);
        }

        Message withDeleted() {
            return new Message(botId, chatId, messageId, method, text, mediaType, media, replyMarkup, silent, protectContent,
                    threadId, true, linkPreviewDisabled);
        }
    }

    private final HttpServer server;
    private final ExecutorService executor;
    private final Clock clock;
    private final Limits limits;
    private final Set<String> requiredTokenHashes;
    private final CountDownLatch closing = new CountDownLatch(1);

    private final FakeTelegramMethods methods;
    // the methods' lock and state, the same objects (guarded by lock)
    private final Object lock;
    private final TelegramLimiter limiter;
    private final List<Accepted> accepted;
    private final Map<String, ArrayDeque<TelegramBehaviour>> queued;
    private final Map<String, TelegramBehaviour> chatStates;
    private final Map<String, Long> rejected429ByBot;
    private final Map<TelegramLimiter.Scope, Long> rejected429ByScope;
    private final Map<String, Long> paidBroadcastRequests;
    private final Map<Integer, Long> responsesByStatus;
    private final FakeMessageStore messages;
    private final AtomicLong requests = new AtomicLong();
    private final List<Call> calls = new ArrayList<>();

    private FakeTelegram(Builder b) throws IOException {
        this.clock = b.clock;
        this.limits = b.limits;
        this.requiredTokenHashes = Set.copyOf(b.requiredTokenHashes);
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
        this.executor = Executors.newFixedThreadPool(b.threads, daemonThreads());
        this.server = HttpServer.create(new InetSocketAddress(b.bindAddress, b.port), 256);
        server.createContext("/", this::handle);
        server.setExecutor(executor);
        server.start();
        LOG.info("FakeTelegram listening on {}:{} with {}", b.bindAddress.getHostAddress(), port(), limits);
    }

    /** Starts with {@link Limits#telegram()}, the system clock and 32 threads on a free port. */
    public static FakeTelegram start() {
        return builder().start();
    }

    /** Starts with {@code limits}, the system clock and 32 threads on a free port. */
    public static FakeTelegram start(Limits limits) {
        return builder().limits(limits).start();
    }

    /** Starts with {@code limits} on {@code port} (0 = any free port), the system clock and 32 threads. */
    public static FakeTelegram start(int port, Limits limits) {
        return builder().port(port).limits(limits).start();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Options for {@link FakeTelegram}. */
    public static final class Builder {
        private Limits limits = Limits.telegram();
        private Clock clock = Clock.systemUTC();
        private int threads = 32;
        private int port = 0;
        private InetAddress bindAddress = InetAddress.getLoopbackAddress();
        private final Set<String> requiredTokenHashes = new HashSet<>();

        private Builder() {
        }

        public Builder limits(Limits limits) {
            this.limits = java.util.Objects.requireNonNull(limits, "limits");
            return this;
        }

        /** The time source for limits and {@link Accepted#acceptedAtMillis()}. */
        public Builder clock(Clock clock) {
            this.clock = java.util.Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** Server threads; at least the number of concurrent calls expected (senders × concurrency). */
        public Builder threads(int threads) {
            if (threads < 1) {
                throw new IllegalArgumentException("threads: must be >= 1, was " + threads);
            }
            this.threads = threads;
            return this;
        }

        /** A fixed port (0 = any free port, the default). */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port: must be 0..65535, was " + port);
            }
            this.port = port;
            return this;
        }

        /**
         * The local address to listen on; default loopback ({@code 127.0.0.1}), so a test's fake is not
         * reachable from the network. {@code 0.0.0.0} (any) lets other containers reach it, e.g. in
         * docker-compose. {@link #url()} still names 127.0.0.1, which any bind address also serves.
         */
        public Builder bindAddress(InetAddress address) {
            this.bindAddress = java.util.Objects.requireNonNull(address, "bindAddress");
            return this;
        }

        /**
         * Accept only these tokens (others get 401 Unauthorized). Only a SHA-256 hash of the token is
         * kept. Without this, every well-formed token ({@code <digits>:<secret>}) is accepted.
         */
        public Builder requireToken(String token) {
            requiredTokenHashes.add(sha256(token));
            return this;
        }

        /**
         * @throws IllegalStateException if the HTTP server cannot bind
         */
        public FakeTelegram start() {
            try {
                return new FakeTelegram(this);
            } catch (IOException e) {
                throw new IllegalStateException("FakeTelegram cannot bind " + bindAddress.getHostAddress() + ":" + port + ": " + e.getMessage(), e);
            }
        }
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
        return server.getAddress().getPort();
    }

    public Limits limits() {
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
            calls.clear();
            queued.clear();
            chatStates.clear();
            rejected429ByBot.clear();
            rejected429ByScope.clear();
            responsesByStatus.clear();
            limiter.reset();
            messages.clear();
            requests.set(0);
        }
    }

    // ---------------------------------------------------------------- observations

    /** A snapshot of every {@code sendMessage} request with its answer, in arrival order. */
    public List<Call> calls() {
        synchronized (lock) {
            return List.copyOf(calls);
        }
    }

    /** The {@code sendMessage} requests to {@code chatId} (any bot), in arrival order. */
    public List<Call> callsFor(String chatId) {
        String chat = normaliseChatId(chatId);
        synchronized (lock) {
            return calls.stream().filter(c -> chat.equals(c.chatId())).toList();
        }
    }

    private FakeTelegramMethods.Answer recordCall(String botId, String method, Map<String, String> params,
                                                  FakeTelegramMethods.Answer answer) {
        String raw = params.get("chat_id");
        String chat;
        try {
            chat = raw == null ? null : normaliseChatId(raw);
        } catch (IllegalArgumentException e) {
            chat = raw;
        }
        synchronized (lock) {
            calls.add(new Call(botId, chat, params.get("text"), clock.millis(), answer.dropConnection ? 0 : answer.status, method));
        }
        return answer;
    }

    /** The message {@code messageId} this fake issued to {@code chatId} for bot {@code botId} (the token's id), as it is now. */
    public java.util.Optional<Message> message(String botId, String chatId, long messageId) {
        synchronized (lock) {
            return java.util.Optional.ofNullable(messages.get(key(bot(botId), normaliseChatId(chatId)), messageId));
        }
    }

    /** A snapshot of every accepted message, in acceptance order. */
    public List<Accepted> accepted() {
        synchronized (lock) {
            return List.copyOf(accepted);
        }
    }

    /** Accepted messages to {@code chatId} (any bot), in acceptance order. */
    public List<Accepted> acceptedFor(String chatId) {
        String chat = normaliseChatId(chatId);
        synchronized (lock) {
            return accepted.stream().filter(a -> a.chatId().equals(chat)).toList();
        }
    }

    /** HTTP requests received (any path, any answer). */
    public long requestCount() {
        return requests.get();
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
        return maxPerGroup(a -> a.botId(), window, a -> true);
    }

    /** The most messages any one chat (per bot) had accepted within any sliding {@code window}. */
    public int maxChatMessagesPer(Duration window) {
        return maxPerGroup(a -> a.botId() + "|" + a.chatId(), window, a -> true);
    }

    /** The most messages any one group chat (negative id or {@code @username}, per bot) had accepted within any sliding {@code window}. */
    public int maxGroupMessagesPer(Duration window) {
        return maxPerGroup(a -> a.botId() + "|" + a.chatId(), window, a -> TelegramLimiter.isGroup(a.chatId()));
    }

    private int maxPerGroup(Function<Accepted, String> keyOf, Duration window, java.util.function.Predicate<Accepted> filter) {
        Map<String, List<Long>> times = new LinkedHashMap<>();
        for (Accepted a : accepted()) {
            if (filter.test(a)) {
                times.computeIfAbsent(keyOf.apply(a), k -> new ArrayList<>()).add(a.acceptedAtMillis());
            }
        }
        int max = 0;
        for (List<Long> t : times.values()) {
            max = Math.max(max, maxPerSlidingWindow(t, window.toMillis()));
        }
        return max;
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

    // ---------------------------------------------------------------- HTTP

    private void handle(HttpExchange exchange) {
        requests.incrementAndGet();
        try (exchange) {
            FakeTelegramMethods.Answer answer;
            try {
                answer = answer(exchange);
            } catch (RuntimeException e) {
                LOG.warn("FakeTelegram: internal error answering a request: {}", e.toString());
                answer = methods.error(500, "Internal Server Error", null);
            }
            if (answer.dropConnection) {
                return; // closing without sendResponseHeaders drops the connection
            }
            if (answer.stall != null) {
                // the message is recorded as accepted; the client waits past its read timeout
                closing.await(answer.stall.toMillis(), TimeUnit.MILLISECONDS);
            }
            byte[] body = JSON.writeValueAsBytes(answer.body);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(answer.status, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException | RuntimeException e) {
            // never log the request path: it holds the token
            LOG.debug("FakeTelegram: request failed: {}", e.toString());
        }
    }


    private FakeTelegramMethods.Answer answer(HttpExchange exchange) throws IOException {
        Matcher path = PATH.matcher(exchange.getRequestURI().getRawPath());
        if (!path.matches()) {
            FakeTelegramRequests.drain(exchange);
            return methods.error(404, "Not Found", null);
        }
        Matcher token = TOKEN.matcher(path.group(1));
        if (!token.matches()) {
            FakeTelegramRequests.drain(exchange);
            return methods.error(404, "Not Found", null);
        }
        if (!requiredTokenHashes.isEmpty() && !requiredTokenHashes.contains(sha256(path.group(1)))) {
            FakeTelegramRequests.drain(exchange);
            return methods.error(401, "Unauthorized", null);
        }
        String botId = token.group(1);
        String method = path.group(2).toLowerCase(Locale.ROOT);
        Map<String, String> params = FakeTelegramRequests.params(exchange);
        return switch (method) {
            case "sendmessage", "sendphoto", "senddocument", "sendvideo", "sendanimation", "sendaudio", "editmessagetext",
                    "editmessagecaption", "editmessagereplymarkup", "deletemessage" ->
                    recordCall(botId, path.group(2), params, methods.call(botId, method, path.group(2), params));
            case "getme" -> methods.ok(FakeTelegramMethods.getMe(botId));
            default -> methods.error(404, "Not Found: method not found", null);
        };
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

    private static String sha256(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from the JDK", e);
        }
    }

    private static ThreadFactory daemonThreads() {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, "fake-telegram-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** Stops the server (stalled answers are released) and its threads. Idempotent. */
    @Override
    public void close() {
        closing.countDown();
        server.stop(0);
        executor.shutdownNow();
        try {
            if (!executor.awaitTermination(5, TimeUnit.SECONDS)) {
                LOG.warn("FakeTelegram threads still busy after 5 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        synchronized (lock) {
            return "FakeTelegram[" + url() + ", accepted=" + accepted.size() + ", requests=" + requests.get() + "]";
        }
    }
}
