package dev.sluice.sender.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.config.TokenRedaction;
import dev.sluice.sender.provider.BotScopedTransport;
import dev.sluice.sender.provider.BotToken;
import dev.sluice.sender.provider.SendOutcome;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.random.RandomGenerator;

/**
 * Sends through configured HTTP providers ({@link HttpProviderConfig}) with the JDK's {@link HttpClient}, and
 * classifies the answer like the Telegram transport, so the sender schedules, penalises and retries both
 * the same way. The {@code botId} of {@link #send} is the provider id.
 *
 * <ul>
 * <li>429 → {@link SendOutcome.RetryAfter} of scope BOT (a provider limits its API key, not one recipient),
 *     the wait from the {@code Retry-After} header (delay-seconds or HTTP-date, {@link RetryAfterHeader}),
 *     else from {@code retry.after.json.field} in the body, else exponential backoff with full jitter over the
 *     provider's consecutive throttle signals. The sender writes it as a shared bot gate and lowers the key's
 *     rate (AIMD): a 429 after the shared budget granted means the bucket drifted from the provider.</li>
 * <li>2xx that passes the {@link ResponseCheck} → {@link SendOutcome.Delivered} (a numeric value at the
 *     check's JSON pointer is the provider message id); a 2xx that fails it → a soft limit, handled like a
 *     bare 429 (RetryAfter with backoff, scope BOT), never a delivery.</li>
 * <li>5xx, connect errors, resets → {@link SendOutcome.TransientFailure}; a request timeout after the request
 *     was sent → TransientFailure with {@code maybeDelivered}.</li>
 * <li>401 → {@link SendOutcome.TokenRejected} (the API key is refused: the bot's lanes are parked).</li>
 * <li>any other status (other 4xx, 3xx: redirects are not followed) → {@link SendOutcome.PermanentFailure}.</li>
 * </ul>
 * Header values, the token and the filled URL are never part of an outcome, a log line or {@link #toString()}.
 */
public final class HttpProviderTransport implements BotScopedTransport {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int SNIPPET_CHARS = 160;

    private final Map<String, HttpProviderConfig> providers;
    private final Map<String, BotToken> tokens;
    private final Duration requestTimeout;
    private final Clock clock;
    private final RandomGenerator random;
    private final ExecutorService executor;
    private final HttpClient http;
    private final Map<String, AtomicInteger> throttleStreak = new ConcurrentHashMap<>();

    /**
     * @param providers      provider id → config
     * @param tokens         provider id → secret for the {@code {token}} placeholder (may lack providers that
     *                       do not use it)
     * @param connectTimeout TCP (and TLS) connect bound
     * @param requestTimeout bound on one call, from sending to the whole answer
     * @param clock          the time HTTP-dates and epoch fields are measured against
     * @param random         jitter source; thread-safe (e.g. one drawing from ThreadLocalRandom)
     */
    public HttpProviderTransport(Map<String, HttpProviderConfig> providers, Map<String, BotToken> tokens,
                                 Duration connectTimeout, Duration requestTimeout, Clock clock, RandomGenerator random) {
        this.providers = Map.copyOf(providers);
        this.tokens = Map.copyOf(tokens);
        this.requestTimeout = requestTimeout;
        this.clock = clock;
        this.random = random;
        this.executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "sluice-http-provider");
            t.setDaemon(true);
            return t;
        });
        this.http = HttpClient.newBuilder().connectTimeout(connectTimeout)
                .followRedirects(HttpClient.Redirect.NEVER).executor(executor).build();
    }

    /** With the system clock and ThreadLocalRandom jitter. */
    public HttpProviderTransport(Map<String, HttpProviderConfig> providers, Map<String, BotToken> tokens,
                                 Duration connectTimeout, Duration requestTimeout) {
        this(providers, tokens, connectTimeout, requestTimeout, Clock.systemUTC(),
                () -> java.util.concurrent.ThreadLocalRandom.current().nextLong());
    }

    /** Whether {@code botId} is a provider of this transport. */
    @Override
    public boolean serves(String botId) {
        return providers.containsKey(botId);
    }

    /**
     * @param botId     the provider id
     * @param chatId    the recipient, filled into {@code {chat}}
     * @param text      the message, filled into {@code {text}}
     * @param parseMode ignored (a Telegram notion)
     * @throws IllegalArgumentException when {@code botId} is not a configured provider
     */
    @Override
    public SendOutcome send(String botId, String chatId, String text, String parseMode) {
        HttpProviderConfig p = providers.get(botId);
        if (p == null) {
            throw new IllegalArgumentException("no HTTP provider configured as '" + botId + "' (provider." + botId
                    + ".url.template)");
        }
        BotToken token = tokens.get(botId);
        HttpRequest request;
        try {
            request = request(p, token, chatId, text);
        } catch (IllegalArgumentException e) {
            // e.g. a header filled with a line break from the text: sending again would fail again
            return new SendOutcome.PermanentFailure(0, "request for provider " + botId + " not built: "
                    + redact(token, e.getMessage()));
        }
        HttpResponse<byte[]> response;
        try {
            response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
        } catch (HttpConnectTimeoutException | ConnectException e) {
            return new SendOutcome.TransientFailure(null, io(botId, e, token), false);
        } catch (HttpTimeoutException e) {
            // the request was sent and no whole answer came: the provider may have accepted it
            return new SendOutcome.TransientFailure(null, io(botId, e, token), true);
        } catch (IOException e) {
            return new SendOutcome.TransientFailure(null, io(botId, e, token), false);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new SendOutcome.TransientFailure(null, "interrupted while calling provider " + botId, true);
        }
        return classify(p, response.statusCode(), response.headers().firstValue("Retry-After").orElse(null),
                response.headers().firstValue("Content-Type").orElse(null), response.body(), token);
    }

    private HttpRequest request(HttpProviderConfig p, BotToken token, String chatId, String text) {
        Map<String, String> values = new HashMap<>();
        values.put("chat", chatId);
        values.put("text", text == null ? "" : text);
        values.put("token", token == null ? "" : token.reveal());
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(p.url().fill(values))).timeout(requestTimeout);
        p.headers().forEach((name, value) -> b.header(name, value.fill(values)));
        HttpRequest.BodyPublisher body = p.body() == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(p.body().fill(values), StandardCharsets.UTF_8);
        return b.method(p.method(), body).build();
    }

    /**
     * Classifies one answer (package-private for tests without a server).
     *
     * @param retryAfter  the {@code Retry-After} header, may be null
     * @param contentType the {@code Content-Type} header, may be null
     */
    SendOutcome classify(HttpProviderConfig p, int status, String retryAfter, String contentType, byte[] body,
                         BotToken token) {
        if (status == 429) {
            Instant now = clock.instant();
            Optional<Duration> wait = RetryAfterHeader.parse(retryAfter, now);
            String source = "Retry-After";
            if (wait.isEmpty()) {
                wait = jsonRetryAfter(p, body, now);
                source = p.retryAfterJsonPointer();
            }
            streak(p.id()).incrementAndGet();
            if (wait.isPresent()) {
                return new SendOutcome.RetryAfter(wait.get(), SendOutcome.PenaltyScope.BOT, "HTTP 429 from provider "
                        + p.id() + ": retry after " + wait.get().toMillis() + " ms (" + source + ")");
            }
            return throttled(p, "HTTP 429 from provider " + p.id() + " without a retry time");
        }
        if (status >= 200 && status <= 299) {
            ResponseCheck.Verdict verdict = p.responseCheck().check(status, contentType, body);
            if (!verdict.passed()) {
                streak(p.id()).incrementAndGet();
                return throttled(p, verdict.failure() + " (HTTP " + status + " from provider " + p.id() + ": "
                        + snippet(body, token) + ")");
            }
            streak(p.id()).set(0);
            JsonNode id = verdict.found();
            return new SendOutcome.Delivered(id != null && id.canConvertToLong() && id.isIntegralNumber()
                    ? id.asLong() : 0);
        }
        String description = "HTTP " + status + " from provider " + p.id() + ": " + snippet(body, token);
        if (status >= 500) {
            return new SendOutcome.TransientFailure(status, description, false);
        }
        if (status == 401) {
            return new SendOutcome.TokenRejected(status, description); // the API key, not this message
        }
        return new SendOutcome.PermanentFailure(status, description);
    }

    /** A throttle signal with no time to read: backoff with full jitter over the provider's streak. */
    private SendOutcome throttled(HttpProviderConfig p, String why) {
        int n = Math.max(1, streak(p.id()).get());
        Duration wait = p.backoff().delay(n, random);
        return new SendOutcome.RetryAfter(wait, SendOutcome.PenaltyScope.BOT, why + "; backoff " + wait.toMillis()
                + " ms (throttle signal " + n + " in a row)");
    }

    private AtomicInteger streak(String providerId) {
        return throttleStreak.computeIfAbsent(providerId, id -> new AtomicInteger());
    }

    /** The configured JSON field of a 429 body, read by its format; empty when absent or unreadable. */
    static Optional<Duration> jsonRetryAfter(HttpProviderConfig p, byte[] body, Instant now) {
        if (p.retryAfterJsonPointer() == null || body.length == 0) {
            return Optional.empty();
        }
        JsonNode v;
        try {
            v = JSON.readTree(body);
        } catch (IOException e) {
            return Optional.empty();
        }
        v = v == null ? null : v.at(p.retryAfterJsonPointer());
        if (v == null || !(v.isNumber() || (v.isTextual() && v.asText().trim().matches("\\d{1,15}(\\.\\d+)?")))) {
            return Optional.empty();
        }
        double x = v.isNumber() ? v.asDouble() : Double.parseDouble(v.asText().trim());
        if (!(x >= 0) || Double.isInfinite(x)) {
            return Optional.empty();
        }
        Duration wait = switch (p.retryAfterFormat()) {
            case DELTA_SECONDS -> Duration.ofMillis(Math.round(Math.ceil(x * 1000)));
            case DELTA_MS -> Duration.ofMillis(Math.round(Math.ceil(x)));
            case EPOCH_SECONDS -> Duration.between(now, Instant.ofEpochMilli(Math.round(Math.ceil(x * 1000))));
            case EPOCH_MS -> Duration.between(now, Instant.ofEpochMilli(Math.round(Math.ceil(x))));
        };
        return Optional.of(wait.isNegative() ? Duration.ZERO : wait);
    }

    private static String io(String botId, Exception e, BotToken token) {
        return e.getClass().getSimpleName() + " calling provider " + botId + ": " + redact(token, String.valueOf(e.getMessage()));
    }

    /** The start of a body on one line, the token redacted: enough to tell a captcha page from an error. */
    private static String snippet(byte[] body, BotToken token) {
        if (body.length == 0) {
            return "empty body";
        }
        // redacted before it is cut: a token cut in half would no longer match and half of it would be shown
        String s = redact(token, new String(body, 0, Math.min(body.length, SNIPPET_CHARS * 4), StandardCharsets.UTF_8)
                .replaceAll("\\s+", " ").trim());
        if (s.length() > SNIPPET_CHARS) {
            s = s.substring(0, SNIPPET_CHARS) + "…";
        }
        return s;
    }

    private static String redact(BotToken token, String text) {
        return token == null ? TokenRedaction.redact(text) : token.redact(text);
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }

    @Override
    public String toString() {
        return "HttpProviderTransport{providers=" + providers.keySet() + "}";
    }
}
