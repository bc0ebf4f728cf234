package dev.sluice.testkit;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HexFormat;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link FakeTelegram}'s HTTP server (loopback by default, a fixed pool of daemon threads) and its handling: routes {@code /bot<token>/<method>} to {@link FakeTelegramMethods} (requests
 * parsed by {@link FakeTelegramRequests}), checks the token's shape (and, when tokens are required, its SHA-256 hash),
 * writes the JSON answer, and records every call of a sending or editing method ({@link #calls}) and every request
 * ({@link #requests}). The token is never logged or kept: only its bot id part and, for required tokens, a hash.
 *
 * <p>Thread ownership: the server's threads call {@link #handle}; {@link #calls} is guarded by the methods' lock, the
 * request counter is atomic, {@link #closing} releases stalled answers when the fake closes.
 */
final class FakeTelegramHttp implements HttpHandler {
    static {
        JdkHttpServerNoDelay.enable(); // before this JVM's first HttpServer: no 40 ms Nagle stalls
    }

    private static final Logger LOG = LoggerFactory.getLogger(FakeTelegram.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern PATH = Pattern.compile("^/bot([^/]*)/([^/]+)/?$");
    private static final Pattern TOKEN = Pattern.compile("^(\\d{1,20}):[A-Za-z0-9_-]{1,100}$");

    /** HTTP requests received (any path, any answer). */
    final AtomicLong requests = new AtomicLong();
    /** Every call of a sending or editing method with its answer, in arrival order (guarded by the methods' lock). */
    final List<FakeTelegramCall> calls = new ArrayList<>();
    /** Counted down when the fake closes: a stalled answer stops waiting. */
    final CountDownLatch closing = new CountDownLatch(1);

    private final FakeTelegramMethods methods;
    private final Set<String> requiredTokenHashes;
    private final Clock clock;
    private final HttpServer server;
    private final ExecutorService executor;

    /** Binds and starts the server with the builder's address, port, threads and required tokens. */
    FakeTelegramHttp(FakeTelegramMethods methods, FakeTelegramBuilder b) throws IOException {
        this.methods = methods;
        this.requiredTokenHashes = Set.copyOf(b.requiredTokenHashes);
        this.clock = b.clock;
        this.executor = Executors.newFixedThreadPool(b.threads, daemonThreads());
        this.server = HttpServer.create(new InetSocketAddress(b.bindAddress, b.port), 256);
        server.createContext("/", this);
        server.setExecutor(executor);
        server.start();
    }

    int port() {
        return server.getAddress().getPort();
    }

    /** Stops the server (stalled answers are released) and its threads. Idempotent. */
    void close() {
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

    private static ThreadFactory daemonThreads() {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, "fake-telegram-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    @Override
    public void handle(HttpExchange exchange) {
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

    private FakeTelegramMethods.Answer recordCall(String botId, String method, Map<String, String> params,
                                                  FakeTelegramMethods.Answer answer) {
        String raw = params.get("chat_id");
        String chat;
        try {
            chat = raw == null ? null : FakeTelegram.normaliseChatId(raw);
        } catch (IllegalArgumentException e) {
            chat = raw;
        }
        synchronized (methods.lock) {
            calls.add(new FakeTelegramCall(botId, chat, params.get("text"), clock.millis(),
                    answer.dropConnection ? 0 : answer.status, method));
        }
        return answer;
    }

    /** The hex SHA-256 of a token: all that is kept of a required token. */
    static String sha256(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from the JDK", e);
        }
    }
}
