package dev.sluice.testkit;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A mock rate-limited HTTP provider (an SMS or payments API) for tests of HTTP provider transports.
 *
 * <p>Any method and path on 127.0.0.1. The API key is read from a header ({@code X-Api-Key} by default;
 * missing → 401). Per key a GCRA admits {@code ratePerS} requests per second with a burst of
 * {@code burst} (a token bucket: at most burst + rate·T in any interval T); excess gets 429 with a
 * {@code Retry-After} header in the configured {@link RetryAfterStyle} and a JSON body
 * {@code {"error":"rate_limited","reset":<seconds to wait>}}. An admitted request gets 200
 * {@code application/json} {@code {"id":<n>,"status":"queued"}} and is recorded with its time.
 *
 * <p>Switches: {@link #softLimit(boolean)} answers every request 200 with a captcha-like HTML page (a soft
 * limit: nothing is accepted); {@link #forceRetryAfter(Duration)} answers every request 429 until that
 * time has passed, with {@code Retry-After} naming the time left (rounded up to whole seconds);
 * {@link #answerStatus(int)} answers every request with a fixed status (an outage: 503).
 *
 * <p>API keys are never logged or kept: requests are recorded under {@link #keyId(String)}, a short hash.
 */
public final class MockHttpProvider implements AutoCloseable {
    static {
        JdkHttpServerNoDelay.enable(); // before this JVM's first HttpServer: no 40 ms Nagle stalls
    }

    private static final Logger LOG = LoggerFactory.getLogger(MockHttpProvider.class);
    static final String CAPTCHA_PAGE = "<!DOCTYPE html><html><head><title>Are you a robot?</title></head><body>"
            + "<form action=\"/captcha\"><p>Unusual traffic from your network. Please solve the captcha.</p>"
            + "<div class=\"captcha\"></div></form></body></html>";

    /** How a 429 names the time to wait. */
    public enum RetryAfterStyle {
        /** {@code Retry-After: 3} (whole seconds, rounded up). */
        DELTA_SECONDS,
        /** {@code Retry-After: Sun, 29 Nov 2026 20:10:03 GMT} (IMF-fixdate, rounded up to the next second). */
        HTTP_DATE,
        /** No header: only the body's {@code reset} field says it. */
        NONE
    }

    /** What the mock answered. */
    public enum Answer { ACCEPTED, RATE_LIMITED, FORCED_RETRY_AFTER, SOFT_LIMIT, FORCED_STATUS, UNAUTHORIZED }

    /**
     * One request and its answer.
     *
     * @param keyId      {@link #keyId(String)} of the API key (never the key)
     * @param method     the HTTP method
     * @param uri        path and query as received
     * @param body       the request body (UTF-8)
     * @param contentType the request's Content-Type, or null
     * @param atMillis   the mock's clock when it decided, epoch ms
     * @param status     the HTTP status answered
     * @param answer     what it was
     * @param retryAfter the Retry-After header sent, or null
     */
    public record Request(String keyId, String method, String uri, String body, String contentType, long atMillis,
                          int status, Answer answer, String retryAfter) {
    }

    private final HttpServer server;
    private final ExecutorService executor;
    private final Clock clock;
    private final String keyHeader;
    private final long intervalMicros;
    private final long toleranceMicros;
    private final double ratePerS;
    private final int burst;

    private final Object lock = new Object();
    private final Map<String, Long> tatMicros = new HashMap<>();
    private final List<Request> requests = new ArrayList<>();
    private RetryAfterStyle style;
    private boolean softLimit;
    private long forcedUntilMs;
    private int forcedStatus;
    private long nextId = 1;

    private MockHttpProvider(Builder b) throws IOException {
        this.clock = b.clock;
        this.keyHeader = b.keyHeader;
        this.ratePerS = b.ratePerS;
        this.burst = b.burst;
        this.intervalMicros = (long) Math.ceil(1_000_000d / b.ratePerS);
        this.toleranceMicros = (b.burst - 1L) * intervalMicros;
        this.style = b.style;
        this.executor = Executors.newFixedThreadPool(b.threads, r -> {
            Thread t = new Thread(r, "mock-http-provider");
            t.setDaemon(true);
            return t;
        });
        this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
        server.createContext("/", this::handle);
        server.setExecutor(executor);
        server.start();
        LOG.info("MockHttpProvider on {} at {}/s burst {} per {}", url(), ratePerS, burst, keyHeader);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** 5 requests/s per key, burst 5, Retry-After as delta-seconds. */
    public static MockHttpProvider start() {
        return builder().start();
    }

    /** Options of {@link MockHttpProvider}. */
    public static final class Builder {
        private Clock clock = Clock.systemUTC();
        private String keyHeader = "X-Api-Key";
        private double ratePerS = 5;
        private int burst = 5;
        private RetryAfterStyle style = RetryAfterStyle.DELTA_SECONDS;
        private int threads = 16;

        private Builder() {
        }

        /** Requests per second per API key, &gt; 0 (default 5). */
        public Builder ratePerS(double ratePerS) {
            if (!(ratePerS > 0) || Double.isInfinite(ratePerS)) {
                throw new IllegalArgumentException("ratePerS: must be > 0, was " + ratePerS);
            }
            this.ratePerS = ratePerS;
            return this;
        }

        /** Requests a key may send at once after being idle, &ge; 1 (default 5). */
        public Builder burst(int burst) {
            if (burst < 1) {
                throw new IllegalArgumentException("burst: must be >= 1, was " + burst);
            }
            this.burst = burst;
            return this;
        }

        public Builder keyHeader(String name) {
            this.keyHeader = Objects.requireNonNull(name, "keyHeader");
            return this;
        }

        public Builder retryAfter(RetryAfterStyle style) {
            this.style = Objects.requireNonNull(style, "style");
            return this;
        }

        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        public Builder threads(int threads) {
            if (threads < 1) {
                throw new IllegalArgumentException("threads: must be >= 1, was " + threads);
            }
            this.threads = threads;
            return this;
        }

        public MockHttpProvider start() {
            try {
                return new MockHttpProvider(this);
            } catch (IOException e) {
                throw new IllegalStateException("MockHttpProvider cannot bind: " + e.getMessage(), e);
            }
        }
    }

    /** {@code http://127.0.0.1:PORT}. */
    public String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** The first 12 hex digits of the key's SHA-256: how requests are recorded. */
    public static String keyId(String apiKey) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(apiKey.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d).substring(0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---------------------------------------------------------------- switches

    /** On: every request gets 200 with a captcha page (nothing accepted). Off: normal answers. */
    public void softLimit(boolean on) {
        synchronized (lock) {
            softLimit = on;
        }
    }

    /** Every request gets {@code status} (e.g. 503, 400) with a small JSON error; 0 turns it off. */
    public void answerStatus(int status) {
        if (status != 0 && (status < 200 || status > 599)) {
            throw new IllegalArgumentException("status: 0 or 200..599, was " + status);
        }
        synchronized (lock) {
            forcedStatus = status;
        }
    }

    /** Every request gets 429 until {@code duration} from now has passed, whatever its key. */
    public void forceRetryAfter(Duration duration) {
        synchronized (lock) {
            forcedUntilMs = clock.millis() + duration.toMillis();
        }
    }

    /** The instant a forced penalty ends (epoch ms), 0 if none was forced. */
    public long forcedUntilMillis() {
        synchronized (lock) {
            return forcedUntilMs;
        }
    }

    public void retryAfterStyle(RetryAfterStyle style) {
        synchronized (lock) {
            this.style = Objects.requireNonNull(style, "style");
        }
    }

    /** Forgets requests, limiter state and switches (the Retry-After style stays). */
    public void reset() {
        synchronized (lock) {
            requests.clear();
            tatMicros.clear();
            softLimit = false;
            forcedUntilMs = 0;
            forcedStatus = 0;
        }
    }

    // ---------------------------------------------------------------- observations

    /** Every request with its answer, in decision order. */
    public List<Request> requests() {
        synchronized (lock) {
            return List.copyOf(requests);
        }
    }

    /** The accepted requests (200 with an id), in order. */
    public List<Request> accepted() {
        return requests().stream().filter(r -> r.answer() == Answer.ACCEPTED).toList();
    }

    /** Requests answered 429 (rate limited or forced). */
    public long count429() {
        return requests().stream().filter(r -> r.status() == 429).count();
    }

    public long count(Answer answer) {
        return requests().stream().filter(r -> r.answer() == answer).count();
    }

    // ---------------------------------------------------------------- server

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            byte[] in;
            try (InputStream is = ex.getRequestBody()) {
                in = is.readAllBytes();
            }
            String key = ex.getRequestHeaders().getFirst(keyHeader);
            String keyId = key == null || key.isBlank() ? null : keyId(key);
            Reply reply;
            synchronized (lock) {
                reply = decide(keyId);
                requests.add(new Request(keyId, ex.getRequestMethod(), ex.getRequestURI().toString(),
                        new String(in, StandardCharsets.UTF_8), ex.getRequestHeaders().getFirst("Content-Type"),
                        reply.atMs, reply.status, reply.answer, reply.retryAfter));
            }
            ex.getResponseHeaders().set("Content-Type", reply.contentType);
            if (reply.retryAfter != null) {
                ex.getResponseHeaders().set("Retry-After", reply.retryAfter);
            }
            byte[] out = reply.body.getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(reply.status, out.length);
            try (OutputStream os = ex.getResponseBody()) {
                os.write(out);
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("mock provider request failed: {}", e.toString());
        }
    }

    private record Reply(int status, Answer answer, String contentType, String body, String retryAfter, long atMs) {
    }

    /** Lock held. */
    private Reply decide(String keyId) {
        long nowMs = clock.millis();
        if (keyId == null) {
            return new Reply(401, Answer.UNAUTHORIZED, "application/json", "{\"error\":\"missing " + keyHeader + "\"}",
                    null, nowMs);
        }
        if (forcedStatus != 0) {
            return new Reply(forcedStatus, Answer.FORCED_STATUS, "application/json",
                    "{\"error\":\"forced status " + forcedStatus + "\"}", null, nowMs);
        }
        if (nowMs < forcedUntilMs) {
            return tooMany(Answer.FORCED_RETRY_AFTER, forcedUntilMs - nowMs, nowMs);
        }
        if (softLimit) {
            return new Reply(200, Answer.SOFT_LIMIT, "text/html; charset=utf-8", CAPTCHA_PAGE, null, nowMs);
        }
        long now = TimeUnit.MILLISECONDS.toMicros(nowMs);
        long tat = Math.max(tatMicros.getOrDefault(keyId, now), now);
        long allowAt = tat - toleranceMicros;
        if (now < allowAt) {
            return tooMany(Answer.RATE_LIMITED, Math.max(1, (allowAt - now + 999) / 1000), nowMs);
        }
        tatMicros.put(keyId, tat + intervalMicros);
        long id = nextId++;
        return new Reply(200, Answer.ACCEPTED, "application/json", "{\"id\":" + id + ",\"status\":\"queued\"}", null,
                nowMs);
    }

    private Reply tooMany(Answer answer, long waitMs, long nowMs) {
        long seconds = Math.max(1, (waitMs + 999) / 1000);
        String header = switch (style) {
            case DELTA_SECONDS -> Long.toString(seconds);
            // rounded up to the next whole second, so a client waiting until the date is never early
            case HTTP_DATE -> DateTimeFormatter.RFC_1123_DATE_TIME.format(
                    Instant.ofEpochMilli(((nowMs + waitMs + 999) / 1000) * 1000).atZone(ZoneOffset.UTC));
            case NONE -> null;
        };
        return new Reply(429, answer, "application/json", "{\"error\":\"rate_limited\",\"reset\":" + seconds + "}",
                header, nowMs);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }

    @Override
    public String toString() {
        return "MockHttpProvider{" + url() + ", " + ratePerS + "/s burst " + burst + " per " + keyHeader + "}";
    }
}
