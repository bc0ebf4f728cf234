package dev.sluice.schemas;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.config.ConfigException;
import dev.sluice.config.Settings;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.avro.Schema;
import org.apache.avro.SchemaParseException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * HTTP client for the Confluent Schema Registry REST API subset (works with Confluent, Karapace,
 * Redpanda, Apicurio's ccompat API and testkit's {@code InProcessSchemaRegistry}):
 * <ul>
 *   <li>{@code POST /subjects/{subject}/versions} body {@code {"schema": "<avro json>"}} → {@code {"id": N}}</li>
 *   <li>{@code GET /schemas/ids/{id}} → {@code {"schema": "<avro json>"}}</li>
 *   <li>{@code POST /subjects/{subject}} body {@code {"schema": "<avro json>"}} → {@code {"id": N, ...}}
 *       ({@link #lookup}: the id without registering, for read-only credentials)</li>
 * </ul>
 * Content type {@code application/vnd.schemaregistry.v1+json}. Both directions are cached (subject+schema
 * → id and id → schema) for the life of the client, so each schema costs at most one HTTP call.
 *
 * <p>Config keys: {@code schema.registry.url} (required; comma-separated list, the first one that
 * answers is used and remembered), {@code basic.auth.user.info} ({@code user:password}, sent as HTTP
 * Basic auth, never logged), {@code schema.registry.connect.timeout.ms} (default 2000),
 * {@code schema.registry.request.timeout.ms} (default 5000), {@code schema.registry.retry.max.ms}
 * (default 10000: how long a call retries retriable failures, exponential backoff from 100 ms up to
 * 2 s with jitter; 0 = no retries).
 *
 * <p>Errors: {@link SchemaRegistryException} with the registry's error_code; 5xx/408/429 and I/O errors
 * are retriable (retried within {@code schema.registry.retry.max.ms}, then thrown), other 4xx are
 * permanent and thrown at once. Retrying here, inside the call, matters for Kafka Streams: a failed
 * stream thread is replaced, but its partitions only come back after the consumer session timeout
 * (45 s by default), so a short registry blip would otherwise stall processing for that long.
 */
public final class CachedSchemaRegistryClient implements SchemaRegistryClient {
    public static final String URL_CONFIG = "schema.registry.url";
    public static final String BASIC_AUTH_USER_INFO_CONFIG = "basic.auth.user.info";
    public static final String CONNECT_TIMEOUT_MS_CONFIG = "schema.registry.connect.timeout.ms";
    public static final String REQUEST_TIMEOUT_MS_CONFIG = "schema.registry.request.timeout.ms";
    public static final String RETRY_MAX_MS_CONFIG = "schema.registry.retry.max.ms";
    public static final Duration DEFAULT_RETRY_MAX = Duration.ofMillis(10_000);
    private static final long INITIAL_BACKOFF_MS = 100;
    private static final long MAX_BACKOFF_MS = 2_000;
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofMillis(2000);
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofMillis(5000);

    static final String CONTENT_TYPE = "application/vnd.schemaregistry.v1+json";
    private static final String ACCEPT = "application/vnd.schemaregistry.v1+json, "
            + "application/vnd.schemaregistry+json; qs=0.9, application/json; qs=0.5";
    private static final Logger log = LoggerFactory.getLogger(CachedSchemaRegistryClient.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final List<URI> baseUrls;
    private final Optional<String> authorizationHeader;
    private final Duration requestTimeout;
    private final Duration retryMax;
    private final HttpClient http;
    private volatile int preferredUrl = 0;

    private final Map<String, Map<Schema, Integer>> idBySubjectAndSchema = new ConcurrentHashMap<>();
    private final Map<Integer, Schema> schemaById = new ConcurrentHashMap<>();

    /**
     * @param baseUrls          registry base URLs, tried in order on I/O errors and 5xx answers
     * @param basicAuthUserInfo {@code user:password} for HTTP Basic auth, or empty
     * @param connectTimeout    TCP connect timeout
     * @param requestTimeout    whole-request timeout
     */
    public CachedSchemaRegistryClient(List<URI> baseUrls, Optional<String> basicAuthUserInfo,
                                      Duration connectTimeout, Duration requestTimeout) {
        this(baseUrls, basicAuthUserInfo, connectTimeout, requestTimeout, DEFAULT_RETRY_MAX);
    }

    /**
     * @param baseUrls          registry base URLs, tried in order on I/O errors and 5xx answers
     * @param basicAuthUserInfo {@code user:password} for HTTP Basic auth, or empty
     * @param connectTimeout    TCP connect timeout
     * @param requestTimeout    whole-request timeout
     * @param retryMax          how long one call keeps retrying retriable failures (zero: no retry)
     */
    public CachedSchemaRegistryClient(List<URI> baseUrls, Optional<String> basicAuthUserInfo,
                                      Duration connectTimeout, Duration requestTimeout, Duration retryMax) {
        if (baseUrls.isEmpty()) {
            throw new ConfigException(URL_CONFIG, "config '" + URL_CONFIG + "' lists no URL");
        }
        this.baseUrls = List.copyOf(baseUrls);
        this.authorizationHeader = basicAuthUserInfo.filter(s -> !s.isBlank()).map(userInfo ->
                "Basic " + Base64.getEncoder().encodeToString(userInfo.getBytes(StandardCharsets.UTF_8)));
        this.requestTimeout = requestTimeout;
        this.retryMax = retryMax;
        this.http = HttpClient.newBuilder().connectTimeout(connectTimeout).version(HttpClient.Version.HTTP_1_1).build();
    }

    /** A client for {@code urls} (one URL or a comma-separated list), no auth, default timeouts. */
    public CachedSchemaRegistryClient(String urls) {
        this(parseUrls(urls), Optional.empty(), DEFAULT_CONNECT_TIMEOUT, DEFAULT_REQUEST_TIMEOUT);
    }

    /** A client for {@code urls} (one URL or a comma-separated list), no auth, default timeouts. */
    public static CachedSchemaRegistryClient forUrl(String url) {
        return fromSettings(Settings.of(Map.of(URL_CONFIG, url)));
    }

    /** Reads the config keys listed in the class Javadoc from Kafka-style client configs. */
    public static CachedSchemaRegistryClient fromConfigs(Map<String, ?> configs) {
        Map<String, String> strings = new TreeMap<>();
        configs.forEach((k, v) -> {
            if (v != null) {
                strings.put(k, v.toString());
            }
        });
        return fromSettings(Settings.of(strings));
    }

    /** Reads the config keys listed in the class Javadoc; fails with a {@link ConfigException} naming key and value. */
    public static CachedSchemaRegistryClient fromSettings(Settings settings) {
        List<URI> urls = parseUrls(settings.required(URL_CONFIG));
        String userInfo = settings.string(BASIC_AUTH_USER_INFO_CONFIG, settings.string("schema.registry." + BASIC_AUTH_USER_INFO_CONFIG, null));
        return new CachedSchemaRegistryClient(urls, Optional.ofNullable(userInfo),
                Duration.ofMillis(settings.positiveLong(CONNECT_TIMEOUT_MS_CONFIG, DEFAULT_CONNECT_TIMEOUT.toMillis())),
                Duration.ofMillis(settings.positiveLong(REQUEST_TIMEOUT_MS_CONFIG, DEFAULT_REQUEST_TIMEOUT.toMillis())),
                settings.millis(RETRY_MAX_MS_CONFIG, DEFAULT_RETRY_MAX));
    }

    private static List<URI> parseUrls(String raw) {
        List<URI> urls = new ArrayList<>();
        for (String part : raw.split(",")) {
            String u = part.trim();
            if (u.isEmpty()) {
                continue;
            }
            try {
                URI uri = URI.create(u.endsWith("/") ? u.substring(0, u.length() - 1) : u);
                if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
                    throw Settings.invalid(URL_CONFIG, raw.replaceAll("//[^/@,]*@", "//[redacted]@"), "comma-separated http(s)://host:port URLs");
                }
                urls.add(uri);
            } catch (IllegalArgumentException e) {
                if (e instanceof ConfigException ce) {
                    throw ce;
                }
                throw Settings.invalid(URL_CONFIG, raw.replaceAll("//[^/@,]*@", "//[redacted]@"), "comma-separated http(s)://host:port URLs");
            }
        }
        if (urls.isEmpty()) {
            throw Settings.invalid(URL_CONFIG, raw.replaceAll("//[^/@,]*@", "//[redacted]@"), "comma-separated http(s)://host:port URLs");
        }
        return urls;
    }

    @Override
    public int register(String subject, Schema schema) {
        Map<Schema, Integer> bySchema = idBySubjectAndSchema.computeIfAbsent(subject, s -> new ConcurrentHashMap<>());
        Integer cached = bySchema.get(schema);
        if (cached != null) {
            return cached;
        }
        ObjectNode body = JSON.createObjectNode().put("schema", schema.toString());
        JsonNode answer = call("POST", "/subjects/" + encode(subject) + "/versions", body.toString(),
                "register schema under subject '" + subject + "'");
        JsonNode id = answer.get("id");
        if (id == null || !id.canConvertToInt()) {
            throw SchemaRegistryException.fromResponse(200, 50000, "registry answer to register has no integer 'id': " + answer);
        }
        int schemaId = id.intValue();
        bySchema.putIfAbsent(schema, schemaId);
        schemaById.putIfAbsent(schemaId, schema);
        return schemaId;
    }

    @Override
    public int lookup(String subject, Schema schema) {
        Map<Schema, Integer> bySchema = idBySubjectAndSchema.computeIfAbsent(subject, s -> new ConcurrentHashMap<>());
        Integer cached = bySchema.get(schema);
        if (cached != null) {
            return cached;
        }
        ObjectNode body = JSON.createObjectNode().put("schema", schema.toString());
        JsonNode answer = call("POST", "/subjects/" + encode(subject), body.toString(),
                "look up schema under subject '" + subject + "'");
        JsonNode id = answer.get("id");
        if (id == null || !id.canConvertToInt()) {
            throw SchemaRegistryException.fromResponse(200, 50000, "registry answer to lookup has no integer 'id': " + answer);
        }
        int schemaId = id.intValue();
        bySchema.putIfAbsent(schema, schemaId);
        schemaById.putIfAbsent(schemaId, schema);
        return schemaId;
    }

    @Override
    public Schema getById(int id) {
        Schema cached = schemaById.get(id);
        if (cached != null) {
            return cached;
        }
        JsonNode answer = call("GET", "/schemas/ids/" + id, null, "get schema id " + id);
        JsonNode type = answer.get("schemaType");
        if (type != null && !type.isNull() && !"AVRO".equalsIgnoreCase(type.asText())) {
            throw SchemaRegistryException.fromResponse(200, 42201,
                    "schema id " + id + " is of type " + type.asText() + ", only AVRO is supported");
        }
        JsonNode text = answer.get("schema");
        if (text == null || !text.isTextual()) {
            throw SchemaRegistryException.fromResponse(200, 50000, "registry answer for schema id " + id + " has no 'schema' text");
        }
        Schema schema;
        try {
            schema = new Schema.Parser().parse(text.asText());
        } catch (SchemaParseException e) {
            throw new SchemaRegistryException(200, SchemaRegistryException.INVALID_SCHEMA,
                    "schema id " + id + " is not a valid Avro schema: " + e.getMessage(), false, e);
        }
        Schema previous = schemaById.putIfAbsent(id, schema);
        return previous != null ? previous : schema;
    }

    private JsonNode call(String method, String path, String body, String what) {
        long deadline = System.nanoTime() + retryMax.toNanos();
        long backoffMs = INITIAL_BACKOFF_MS;
        int attempt = 1;
        while (true) {
            try {
                return callAllUrls(method, path, body, what);
            } catch (SchemaRegistryException e) {
                long leftMs = (deadline - System.nanoTime()) / 1_000_000;
                if (!e.retriable() || leftMs <= 0) {
                    throw e;
                }
                long sleepMs = Math.min(leftMs, backoffMs / 2 + ThreadLocalRandom.current().nextLong(backoffMs / 2 + 1));
                log.warn("schema registry call to {} failed (attempt {}), retrying in {} ms: {}", what, attempt, sleepMs, e.getMessage());
                try {
                    Thread.sleep(sleepMs);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
                backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
                attempt++;
            }
        }
    }

    private JsonNode callAllUrls(String method, String path, String body, String what) {
        SchemaRegistryException last = null;
        int start = preferredUrl;
        for (int i = 0; i < baseUrls.size(); i++) {
            int index = (start + i) % baseUrls.size();
            URI base = baseUrls.get(index);
            try {
                JsonNode answer = callOnce(base, method, path, body, what);
                preferredUrl = index;
                return answer;
            } catch (SchemaRegistryException e) {
                if (!e.retriable()) {
                    throw e;
                }
                last = e;
                log.debug("schema registry {} failed to {}: {}", redact(base), what, e.getMessage());
            }
        }
        throw last;
    }

    private JsonNode callOnce(URI base, String method, String path, String body, String what) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(requestTimeout)
                .header("Accept", ACCEPT);
        authorizationHeader.ifPresent(h -> request.header("Authorization", h));
        if (body != null) {
            request.header("Content-Type", CONTENT_TYPE)
                    .method(method, HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        } else {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        }
        HttpResponse<String> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw SchemaRegistryException.noResponse("cannot " + what + " at " + redact(base) + ": "
                    + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : " " + e.getMessage()), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw SchemaRegistryException.noResponse("interrupted while trying to " + what, e);
        }
        JsonNode json = parse(response.body());
        int status = response.statusCode();
        if (status / 100 != 2) {
            int errorCode = json != null && json.path("error_code").canConvertToInt() ? json.path("error_code").intValue() : status;
            String message = json != null && json.path("message").isTextual() ? json.path("message").asText() : abbreviate(response.body());
            throw SchemaRegistryException.fromResponse(status, errorCode,
                    "cannot " + what + ": registry " + redact(base) + " answered HTTP " + status + " error_code " + errorCode + ": " + message);
        }
        if (json == null) {
            throw SchemaRegistryException.fromResponse(status, 50000,
                    "cannot " + what + ": registry " + redact(base) + " answered non-JSON: " + abbreviate(response.body()));
        }
        return json;
    }

    private static JsonNode parse(String body) {
        if (body == null || body.isBlank()) {
            return null;
        }
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            return null;
        }
    }

    private static String abbreviate(String s) {
        return s == null ? "" : s.length() <= 200 ? s : s.substring(0, 200) + "...";
    }

    private static String encode(String subject) {
        return URLEncoder.encode(subject, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** A URL as it may be logged: without any user info embedded in it. */
    static String redact(URI uri) {
        return uri.getScheme() + "://" + uri.getHost() + (uri.getPort() >= 0 ? ":" + uri.getPort() : "") + uri.getRawPath();
    }

    /** The base URLs, redacted (for logs and tests). */
    public List<String> urls() {
        return baseUrls.stream().map(CachedSchemaRegistryClient::redact).toList();
    }

    @Override
    public String toString() {
        return "CachedSchemaRegistryClient{urls=" + urls() + ", auth=" + (authorizationHeader.isPresent() ? "basic [redacted]" : "none") + "}";
    }
}
