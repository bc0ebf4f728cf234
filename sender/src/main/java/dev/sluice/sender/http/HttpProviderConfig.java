package dev.sluice.sender.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigFamily;
import dev.sluice.config.Settings;
import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetConfigBuilder;
import dev.sluice.sender.budget.BudgetKeys;
import dev.sluice.sender.budget.BudgetLimits;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * One HTTP provider (an SMS or payments API, an LLM API, a webhook receiver), sent to by the sender like a
 * bot: its id is the {@code bot_id} of the messages it carries. Immutable; built from {@link Settings} and
 * validated at start (a {@link ConfigException} names the key and the value; header values are never
 * echoed, they may hold credentials).
 *
 * <table>
 * <caption>Keys, prefix {@code provider.<id>.}; the id is [A-Za-z0-9_-]{1,64}</caption>
 * <tr><td>{@code url.template}</td><td>required, http(s); placeholders {@code {chat}}, {@code {text}},
 *     {@code {token}} are percent-encoded</td></tr>
 * <tr><td>{@code method}</td><td>GET, POST (default), PUT or PATCH</td></tr>
 * <tr><td>{@code header.<Name>}</td><td>a request header; value may use the placeholders; never logged</td></tr>
 * <tr><td>{@code body.template}</td><td>request body; escaped by {@code Content-Type}: JSON (the default when
 *     a body is set and no {@code Content-Type} header is) escapes values with Jackson, form bodies
 *     percent-encode them, anything else is verbatim</td></tr>
 * <tr><td>{@code limit.key}</td><td>the budget key, default {@code ext:<id>}: the provider plus the API key or
 *     plan ({@code ext:sms-api:prod}), never the host; providers with one key share one budget (and must then
 *     have the same rate and burst)</td></tr>
 * <tr><td>{@code rate.per.s}</td><td>required, &gt; 0: the provider's limit for this key</td></tr>
 * <tr><td>{@code burst}</td><td>default 1</td></tr>
 * <tr><td>{@code retry.after.json.field}</td><td>where a 429 body says when to retry, when there is no
 *     {@code Retry-After} header: a top-level field name ({@code reset}) or a JSON pointer
 *     ({@code /error/retry_after})</td></tr>
 * <tr><td>{@code retry.after.json.format}</td><td>{@code delta-seconds} (default), {@code delta-ms},
 *     {@code epoch-seconds} or {@code epoch-ms}</td></tr>
 * <tr><td>{@code backoff.base.ms}, {@code backoff.max.ms}</td><td>exponential backoff with full jitter when a
 *     throttle signal gives no time (a bare 429, a soft limit), default 1000 and 60000</td></tr>
 * <tr><td>{@code response.expected.status}</td><td>the 2xx of a delivery, default any 2xx</td></tr>
 * <tr><td>{@code response.content.type}</td><td>e.g. {@code application/json}, default any</td></tr>
 * <tr><td>{@code response.json.pointer}</td><td>must exist and not be null, e.g. {@code /id}; a numeric value
 *     becomes the provider message id</td></tr>
 * <tr><td>{@code response.min.bytes}</td><td>default 0</td></tr>
 * </table>
 * A 2xx that fails a {@code response.*} check is a soft limit: a throttle signal, never a delivery.
 */
public final class HttpProviderConfig {
    public static final String PREFIX = "provider.";
    public static final String URL_TEMPLATE = "url.template";
    public static final String METHOD = "method";
    public static final String HEADER = "header.";
    public static final String BODY_TEMPLATE = "body.template";
    public static final String LIMIT_KEY = "limit.key";
    public static final String RATE = "rate.per.s";
    public static final String BURST = "burst";
    public static final String RETRY_AFTER_JSON_FIELD = "retry.after.json.field";
    public static final String RETRY_AFTER_JSON_FORMAT = "retry.after.json.format";
    public static final String BACKOFF_BASE_MS = "backoff.base.ms";
    public static final String BACKOFF_MAX_MS = "backoff.max.ms";
    public static final String RESPONSE_STATUS = "response.expected.status";
    public static final String RESPONSE_CONTENT_TYPE = "response.content.type";
    public static final String RESPONSE_JSON_POINTER = "response.json.pointer";
    public static final String RESPONSE_MIN_BYTES = "response.min.bytes";
    /** The keys after {@code provider.<id>.}, besides {@code header.<name>}. */
    public static final Set<String> KEYS = Set.of(URL_TEMPLATE, METHOD, BODY_TEMPLATE, LIMIT_KEY, RATE, BURST,
            RETRY_AFTER_JSON_FIELD, RETRY_AFTER_JSON_FORMAT, BACKOFF_BASE_MS, BACKOFF_MAX_MS, RESPONSE_STATUS,
            RESPONSE_CONTENT_TYPE, RESPONSE_JSON_POINTER, RESPONSE_MIN_BYTES);
    /** No dots: the id ends where the key's next segment begins. */
    public static final Pattern PROVIDER_ID = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
    /** The keys {@code provider.<id>.<key>} this class reads, for the list of keys a sender accepts. */
    public static final ConfigFamily FAMILY = new ConfigFamily("provider.<id>.<key>", Pattern.compile(
            Pattern.quote(PREFIX) + PROVIDER_ID.pattern() + "\\.(?:" + String.join("|", new TreeSet<>(KEYS).stream()
                    .map(Pattern::quote).toList()) + "|" + Pattern.quote(HEADER) + ".+)"),
            "an HTTP provider sent to as bot <id> (its bot.<id>.token is the API key); see HttpProviderConfig");
    /** Set by the JDK HttpClient; it refuses them from callers. */
    private static final Set<String> RESTRICTED_HEADERS = Set.of("connection", "content-length", "expect", "host",
            "upgrade");
    private static final Set<String> METHODS = Set.of("GET", "POST", "PUT", "PATCH");
    private static final ObjectMapper JSON = new ObjectMapper();

    /** How {@code retry.after.json.field} is read. */
    public enum RetryAfterFormat {
        /** Seconds to wait. */
        DELTA_SECONDS,
        /** Milliseconds to wait. */
        DELTA_MS,
        /** The Unix time (seconds) the limit resets at. */
        EPOCH_SECONDS,
        /** The Unix time (ms) the limit resets at. */
        EPOCH_MS
    }

    private final String id;
    private final Template url;
    private final String host;
    private final String method;
    private final Map<String, Template> headers;
    private final Template body;
    private final String limitKey;
    private final double ratePerS;
    private final int burst;
    private final String retryAfterJsonPointer;
    private final RetryAfterFormat retryAfterFormat;
    private final FullJitterBackoff backoff;
    private final ResponseCheck responseCheck;

    private HttpProviderConfig(String id, Settings s) {
        this.id = id;
        String p = PREFIX + id + ".";
        s.withPrefix(p).keySet().forEach(k -> {
            if (!KEYS.contains(k) && !k.startsWith(HEADER)) {
                throw new ConfigException(p + k, "unknown config '" + p + k + "': expected one of " + new TreeSet<>(KEYS)
                        + " or header.<Name>");
            }
        });
        String urlKey = p + URL_TEMPLATE;
        String rawUrl = s.required(urlKey);
        this.url = template(urlKey, rawUrl, Template.Encoding.URL);
        this.host = checkUrl(urlKey, rawUrl, url);
        this.method = s.string(p + METHOD, "POST").trim().toUpperCase(Locale.ROOT);
        if (!METHODS.contains(method)) {
            throw Settings.invalid(p + METHOD, method, "one of GET, POST, PUT, PATCH");
        }
        Map<String, Template> hs = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        s.withPrefix(p + HEADER).forEach((name, value) -> {
            if (!HEADER_NAME.matcher(name).matches()) {
                throw Settings.invalid(p + HEADER + name, "[not shown]", "a header name (RFC 9110 token)");
            }
            if (RESTRICTED_HEADERS.contains(name.toLowerCase(Locale.ROOT))) {
                throw new ConfigException(p + HEADER + name, "header '" + name + "' of '" + p + HEADER + name
                        + "' is set by the HTTP client itself; remove it");
            }
            if (value.indexOf('\r') >= 0 || value.indexOf('\n') >= 0) {
                throw new ConfigException(p + HEADER + name, "header value of '" + p + HEADER + name
                        + "' holds a line break (value not shown)");
            }
            hs.put(name, template(p + HEADER + name, value, Template.Encoding.NONE));
        });
        String rawBody = s.string(p + BODY_TEMPLATE, null);
        if (rawBody != null && method.equals("GET")) {
            throw Settings.invalid(p + METHOD, method, "POST, PUT or PATCH when " + p + BODY_TEMPLATE + " is set");
        }
        if (rawBody != null && !hs.containsKey("Content-Type")) {
            hs.put("Content-Type", Template.parse("application/json", Template.Encoding.NONE));
        }
        this.headers = Collections.unmodifiableMap(hs);
        this.body = rawBody == null ? null : template(p + BODY_TEMPLATE, rawBody, bodyEncoding());
        if (body != null && body.encoding() == Template.Encoding.JSON) {
            checkJson(p + BODY_TEMPLATE, rawBody, body);
        }
        this.limitKey = s.string(p + LIMIT_KEY, "ext:" + id).trim();
        if (!BudgetKeys.BOT_ID.matcher(limitKey).matches()) {
            throw Settings.invalid(p + LIMIT_KEY, limitKey, "a key matching " + BudgetKeys.BOT_ID.pattern()
                    + " such as ext:sms-api:prod");
        }
        if (host.contains(".") && limitKey.toLowerCase(Locale.ROOT).contains(host.toLowerCase(Locale.ROOT))) {
            throw Settings.invalid(p + LIMIT_KEY, limitKey, "the provider plus its API key or plan "
                    + "(ext:sms-api:prod), not the host " + host + ": one key may be served by many hosts");
        }
        if (!s.has(p + RATE)) {
            throw new ConfigException(p + RATE, "missing required config '" + p + RATE + "' (or env "
                    + Settings.envName(p + RATE) + "): the provider's rate limit for this key, messages per second");
        }
        this.ratePerS = s.positiveDouble(p + RATE, 1);
        this.burst = s.positiveInt(p + BURST, 1);
        String field = s.string(p + RETRY_AFTER_JSON_FIELD, null);
        this.retryAfterJsonPointer = field == null ? null : pointer(p + RETRY_AFTER_JSON_FIELD, field.trim());
        this.retryAfterFormat = s.enumValue(p + RETRY_AFTER_JSON_FORMAT, RetryAfterFormat.class,
                RetryAfterFormat.DELTA_SECONDS);
        long baseMs = s.positiveLong(p + BACKOFF_BASE_MS, 1000);
        long maxMs = s.positiveLong(p + BACKOFF_MAX_MS, 60_000);
        if (maxMs < baseMs) {
            throw Settings.invalid(p + BACKOFF_MAX_MS, Long.toString(maxMs), "at least " + p + BACKOFF_BASE_MS
                    + " (" + baseMs + ")");
        }
        this.backoff = new FullJitterBackoff(Duration.ofMillis(baseMs), Duration.ofMillis(maxMs));
        int status = Math.toIntExact(s.longValue(p + RESPONSE_STATUS, 0, v -> v == 0 || (v >= 200 && v <= 299),
                "a 2xx status (0: any 2xx)"));
        String responsePointer = s.string(p + RESPONSE_JSON_POINTER, null);
        this.responseCheck = new ResponseCheck(status, s.string(p + RESPONSE_CONTENT_TYPE, null),
                responsePointer == null ? null : pointer(p + RESPONSE_JSON_POINTER, responsePointer.trim()),
                Math.toIntExact(s.longValue(p + RESPONSE_MIN_BYTES, 0, v -> v >= 0 && v <= Integer.MAX_VALUE,
                        "an integer >= 0")));
    }

    /**
     * Every provider configured under {@code provider.<id>.*}, by id in sorted order; empty when none is.
     *
     * @throws ConfigException naming the key and the value of the first invalid setting
     */
    public static Map<String, HttpProviderConfig> all(Settings s) {
        Set<String> ids = new TreeSet<>();
        s.withPrefix(PREFIX).keySet().forEach(rest -> {
            int dot = rest.indexOf('.');
            String id = dot < 0 ? rest : rest.substring(0, dot);
            if (!PROVIDER_ID.matcher(id).matches() || dot < 0) {
                throw Settings.invalid(PREFIX + rest, id, "provider.<id>.<key> with an id matching "
                        + PROVIDER_ID.pattern());
            }
            ids.add(id);
        });
        Map<String, HttpProviderConfig> out = new LinkedHashMap<>();
        ids.forEach(id -> out.put(id, new HttpProviderConfig(id, s)));
        sameLimitsPerKey(out);
        return Collections.unmodifiableMap(out);
    }

    /** One provider; see the class comment for its keys. */
    public static HttpProviderConfig of(String id, Settings s) {
        if (!PROVIDER_ID.matcher(id).matches()) {
            throw new IllegalArgumentException("provider id '" + id + "' does not match " + PROVIDER_ID.pattern());
        }
        return new HttpProviderConfig(id, s);
    }

    /** Provider id → its budget key ({@code limit.key}), for {@link dev.sluice.sender.budget.LimitKeyBudget}. */
    public static Map<String, String> limitKeys(Map<String, HttpProviderConfig> providers) {
        Map<String, String> keys = new TreeMap<>();
        providers.values().forEach(p -> keys.put(p.id(), p.limitKey()));
        return Collections.unmodifiableMap(keys);
    }

    /**
     * The budget config with each provider's limits set under its id (the sender paces per bot id) and under
     * its limit key (the budget decides per key; see {@link dev.sluice.sender.budget.LimitKeyBudget}). An HTTP
     * provider has no per-recipient limit: the recipient and group limits are set to the provider's own rate and
     * burst, so only the key's limit binds.
     */
    public static BudgetConfig withProviderLimits(BudgetConfig budget, Map<String, HttpProviderConfig> providers) {
        if (providers.isEmpty()) {
            return budget;
        }
        BudgetConfigBuilder b = budget.toBuilder();
        providers.values().forEach(p -> {
            b.botLimits(p.id(), p.limits());
            b.botLimits(p.limitKey(), p.limits());
        });
        return b.build();
    }

    private static void sameLimitsPerKey(Map<String, HttpProviderConfig> providers) {
        Map<String, HttpProviderConfig> byKey = new TreeMap<>();
        for (HttpProviderConfig p : providers.values()) {
            HttpProviderConfig other = byKey.putIfAbsent(p.limitKey, p);
            if (other != null && !other.limits().equals(p.limits())) {
                throw Settings.invalid(PREFIX + p.id + "." + RATE, p.ratePerS + " (burst " + p.burst + ")",
                        "the same rate and burst as provider " + other.id + " (" + other.ratePerS + ", burst "
                                + other.burst + "): both spend limit key " + p.limitKey);
            }
        }
    }

    private Template.Encoding bodyEncoding() {
        String type = ResponseCheck.mediaType(headers.get("Content-Type").toString());
        if (type.equals("application/x-www-form-urlencoded")) {
            return Template.Encoding.FORM;
        }
        return type.equals("application/json") || type.endsWith("+json") ? Template.Encoding.JSON
                : Template.Encoding.NONE;
    }

    private static Template template(String key, String raw, Template.Encoding encoding) {
        try {
            return Template.parse(raw, encoding);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(key, "invalid template for config '" + key + "': " + e.getMessage());
        }
    }

    private static final Map<String, String> SAMPLE = Map.of("chat", "+1 555 \"0100\"", "text", "a \"b\"\n\\ c",
            "token", "t0k");

    /** Fills the URL with sample values to check it is an absolute http(s) URL; returns its host. */
    private static String checkUrl(String key, String raw, Template url) {
        try {
            URI u = URI.create(url.fill(SAMPLE));
            if (u.getScheme() == null || !(u.getScheme().equals("http") || u.getScheme().equals("https"))
                    || u.getHost() == null) {
                throw Settings.invalid(key, raw, "an absolute http(s) URL");
            }
            return u.getHost();
        } catch (IllegalArgumentException e) {
            if (e instanceof ConfigException ce) {
                throw ce;
            }
            throw Settings.invalid(key, raw, "an absolute http(s) URL");
        }
    }

    private static void checkJson(String key, String raw, Template body) {
        try {
            JSON.readTree(body.fill(SAMPLE));
        } catch (IOException e) {
            throw Settings.invalid(key, raw, "a JSON body once filled (placeholders inside quotes: \"{text}\")");
        }
    }

    private static String pointer(String key, String raw) {
        String pointer = raw.startsWith("/") ? raw : "/" + raw.replace("~", "~0").replace("/", "~1");
        try {
            com.fasterxml.jackson.core.JsonPointer.compile(pointer);
            return pointer;
        } catch (IllegalArgumentException e) {
            throw Settings.invalid(key, raw, "a field name or a JSON pointer such as /error/retry_after");
        }
    }

    /** The provider id, used as {@code bot_id} by messages it carries. */
    public String id() {
        return id;
    }

    public Template url() {
        return url;
    }

    public String method() {
        return method;
    }

    /** Header name → value template. Values may hold credentials: never log them. */
    public Map<String, Template> headers() {
        return headers;
    }

    /** The body template, or null for none. */
    public Template body() {
        return body;
    }

    /** The budget key this provider spends. */
    public String limitKey() {
        return limitKey;
    }

    public double ratePerS() {
        return ratePerS;
    }

    public int burst() {
        return burst;
    }

    /** The budget limits of the key: its rate and burst; recipients and groups do not limit further. */
    public BudgetLimits limits() {
        return new BudgetLimits(ratePerS, burst, ratePerS, burst, ratePerS * 60, burst);
    }

    /** JSON pointer of the retry time in a 429 body, or null. */
    public String retryAfterJsonPointer() {
        return retryAfterJsonPointer;
    }

    public RetryAfterFormat retryAfterFormat() {
        return retryAfterFormat;
    }

    public FullJitterBackoff backoff() {
        return backoff;
    }

    public ResponseCheck responseCheck() {
        return responseCheck;
    }

    /** No header values and no URL (either may hold an API key): id, method, host, limit key, limits. */
    @Override
    public String toString() {
        return "HttpProviderConfig{id=" + id + ", " + method + " " + host + ", limitKey=" + limitKey + ", rate="
                + ratePerS + "/s, burst=" + burst + ", headers=" + headers.keySet() + ", check=" + responseCheck + "}";
    }
}
