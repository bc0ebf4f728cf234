package dev.sluice.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import dev.sluice.testkit.RegistryStore.ApiError;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An in-process schema registry serving the Confluent Schema Registry REST endpoints common clients call
 * (Confluent's Java serializers, {@code @kafkajs/confluent-schema-registry}, Sluice's own client), on
 * 127.0.0.1 and a free port (JDK {@code com.sun.net.httpserver}), for tests, the embedded demo and dev runs.
 *
 * <p>Endpoints (bodies {@code application/vnd.schemaregistry.v1+json}; schema bodies
 * {@code {"schema":"...","schemaType":"AVRO","references":[{"name","subject","version"}]}}):
 * <ul>
 *   <li>{@code GET /subjects}; {@code GET /subjects/{s}/versions}; {@code GET /subjects/{s}/versions/{v|latest}}
 *       (and {@code .../schema}, the bare schema); {@code POST /subjects/{s}/versions} → {@code {"id":N}};
 *       {@code POST /subjects/{s}} (is this schema registered?) → {@code {"subject","version","id","schema"}}</li>
 *   <li>{@code GET /schemas/ids/{id}} → {@code {"schema","references"?}}; {@code GET /schemas/ids/{id}/versions}
 *       → {@code [{"subject","version"}]}; {@code GET /schemas/ids/{id}/subjects}; {@code GET /schemas/types}</li>
 *   <li>{@code GET /config} → {@code {"compatibilityLevel"}}; {@code PUT /config} {@code {"compatibility"}};
 *       {@code GET|PUT|DELETE /config/{s}} ({@code ?defaultToGlobal=true} falls back to the global level)</li>
 *   <li>{@code POST /compatibility/subjects/{s}/versions/{v|latest}} and {@code .../versions} (what the
 *       level requires) → {@code {"is_compatible":bool}}, with {@code "messages"} when {@code ?verbose=true}</li>
 *   <li>{@code GET /mode} and {@code /mode/{s}} → {@code {"mode":"READWRITE"}}</li>
 * </ul>
 * Semantics and error codes as in Confluent ({@link RegistryStore}): global ids, references, compatibility
 * levels (default {@code BACKWARD}) enforced on register (409). Only Avro; no deletes of schemas; state in
 * memory only. Other paths: 404 with error code 404; a known path with another method: 405.
 *
 * <p>For fault-injection tests: {@link #requireBasicAuth}, {@link #failNextRequests}, {@link #injectFaults}
 * and {@link #requestCount}. Threads: a pool of 4 HTTP workers; the state lives in the {@link RegistryStore}
 * (synchronized), the fault-injection fields are atomics or volatile.
 */
public final class InProcessSchemaRegistry implements AutoCloseable {
    static {
        JdkHttpServerNoDelay.enable(); // before this JVM's first HttpServer: no 40 ms Nagle stalls
    }

    private static final String CONTENT_TYPE = "application/vnd.schemaregistry.v1+json";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final int requestedPort;
    private HttpServer server;
    private ExecutorService executor;

    private final RegistryStore store = new RegistryStore();

    private final AtomicLong requests = new AtomicLong();
    private final AtomicInteger failuresLeft = new AtomicInteger();
    private volatile int failureStatus = 500;
    private volatile String expectedAuthorization;
    private volatile java.util.function.BiFunction<String, String, Integer> faults = (method, path) -> null;

    private InProcessSchemaRegistry(int port) {
        this.requestedPort = port;
    }

    /** Starts a registry on 127.0.0.1 and a free port. */
    public static InProcessSchemaRegistry start() {
        return start(0);
    }

    /** Starts a registry on 127.0.0.1:{@code port} (0 = a free port). */
    public static InProcessSchemaRegistry start(int port) {
        InProcessSchemaRegistry registry = new InProcessSchemaRegistry(port);
        registry.bind();
        return registry;
    }

    private synchronized void bind() {
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", requestedPort), 0);
        } catch (IOException e) {
            throw new IllegalStateException("cannot bind schema registry on 127.0.0.1:" + requestedPort + ": " + e.getMessage(), e);
        }
        AtomicInteger threads = new AtomicInteger();
        executor = Executors.newFixedThreadPool(4, r -> {
            Thread t = new Thread(r, "schema-registry-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/", this::handle);
        server.start();
    }

    /** Base URL, e.g. {@code http://127.0.0.1:43121}: the value for {@code schema.registry.url}. */
    public String url() {
        if (server == null) {
            throw new IllegalStateException("schema registry not started");
        }
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** From now on every request needs HTTP Basic auth with these credentials, else 401. */
    public InProcessSchemaRegistry requireBasicAuth(String user, String password) {
        expectedAuthorization = "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
        return this;
    }

    /** The next {@code n} requests fail with {@code httpStatus} (Confluent error code {@code httpStatus * 100 + 1}). */
    public void failNextRequests(int n, int httpStatus) {
        failureStatus = httpStatus;
        failuresLeft.set(n);
    }

    /**
     * From now on {@code rule} sees each request's method and raw path first: a status it returns is answered
     * instead (Confluent error code {@code status * 100 + 3}), {@link #UNREACHABLE} drops the connection without
     * an answer (the client sees an I/O error, as when the registry is down), null serves the request.
     */
    public void injectFaults(java.util.function.BiFunction<String, String, Integer> rule) {
        faults = java.util.Objects.requireNonNull(rule);
    }

    /** Ends {@link #injectFaults}: every request is served again. */
    public void clearFaults() {
        faults = (method, path) -> null;
    }

    /** For {@link #injectFaults}: drop the connection without an answer. */
    public static final int UNREACHABLE = 0;

    /** Requests received since start (including failed ones). */
    public long requestCount() {
        return requests.get();
    }

    /** Number of distinct schemas registered. */
    public int schemaCount() {
        return store.schemaCount();
    }

    @Override
    public synchronized void close() {
        if (server != null) {
            server.stop(0);
            executor.shutdownNow();
            server = null;
        }
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            requests.incrementAndGet();
            Integer injected = faults.apply(exchange.getRequestMethod(), exchange.getRequestURI().getRawPath());
            if (injected != null && injected == UNREACHABLE) {
                return; // closing the exchange before any answer closes the connection
            }
            Reply reply;
            if (injected != null) {
                reply = new Reply(injected, error(injected * 100 + 3, "Injected fault"));
            } else {
                try {
                    reply = route(exchange);
                } catch (ApiError e) {
                    reply = new Reply(e.status, error(e.code, e.getMessage()));
                } catch (RuntimeException e) {
                    reply = new Reply(500, error(50001, "Error in the backend data store: " + e));
                }
            }
            byte[] body = reply.body instanceof String raw ? raw.getBytes(StandardCharsets.UTF_8) : JSON.writeValueAsBytes(reply.body);
            exchange.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
            exchange.sendResponseHeaders(reply.status, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    private Reply route(HttpExchange exchange) throws IOException {
        String auth = expectedAuthorization;
        if (auth != null && !auth.equals(exchange.getRequestHeaders().getFirst("Authorization"))) {
            throw new ApiError(401, 401, "Unauthorized");
        }
        if (failuresLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new ApiError(failureStatus, failureStatus * 100 + 1, "Injected failure");
        }
        String method = exchange.getRequestMethod();
        List<String> path = segments(exchange.getRequestURI().getRawPath());
        String query = exchange.getRequestURI().getRawQuery();
        byte[] body;
        try (InputStream in = exchange.getRequestBody()) {
            body = in.readAllBytes();
        }
        Reply reply = switch (path.isEmpty() ? "" : path.get(0)) {
            case "subjects" -> subjects(method, path, body);
            case "schemas" -> schemas(method, path);
            case "config" -> config(method, path, body, query);
            case "compatibility" -> compatibility(method, path, body, query);
            case "mode" -> method.equals("GET") && path.size() <= 2
                    ? new Reply(200, JSON.createObjectNode().put("mode", "READWRITE")) : null;
            default -> throw new ApiError(404, 404, "HTTP 404 Not Found");
        };
        if (reply == null) {
            throw new ApiError(405, 405, "HTTP 405 Method Not Allowed");
        }
        return reply;
    }

    private Reply subjects(String method, List<String> path, byte[] body) {
        if (path.size() == 1) {
            return method.equals("GET") ? ok(JSON.valueToTree(store.subjects())) : null;
        }
        String subject = path.get(1);
        if (path.size() == 2) {
            if (!method.equals("POST")) {
                return null;
            }
            SchemaBody b = schemaBody(body);
            return ok(store.lookup(subject, b.text, b.references));
        }
        if (!path.get(2).equals("versions") || path.size() > 5) {
            throw new ApiError(404, 404, "HTTP 404 Not Found");
        }
        if (path.size() == 3) {
            return switch (method) {
                case "GET" -> ok(JSON.valueToTree(store.versions(subject)));
                case "POST" -> {
                    SchemaBody b = schemaBody(body);
                    yield ok(JSON.createObjectNode().put("id", store.register(subject, b.text, b.references)));
                }
                default -> null;
            };
        }
        if (!method.equals("GET")) {
            return null;
        }
        if (path.size() == 5) {
            if (!path.get(4).equals("schema")) {
                throw new ApiError(404, 404, "HTTP 404 Not Found");
            }
            return new Reply(200, store.versionSchemaText(subject, path.get(3)));
        }
        return ok(store.version(subject, path.get(3)));
    }

    private Reply schemas(String method, List<String> path) {
        if (!method.equals("GET")) {
            return null;
        }
        if (path.size() == 2 && path.get(1).equals("types")) {
            return ok(JSON.createArrayNode().add("AVRO"));
        }
        if (path.size() < 3 || path.size() > 4 || !path.get(1).equals("ids")) {
            throw new ApiError(404, 404, "HTTP 404 Not Found");
        }
        int id = parseInt(path.get(2), 40403, "Schema " + path.get(2) + " not found");
        if (path.size() == 3) {
            return ok(store.schemaById(id));
        }
        return switch (path.get(3)) {
            case "versions" -> ok(store.subjectVersionsOfId(id));
            case "subjects" -> {
                List<String> subjects = new ArrayList<>();
                store.subjectVersionsOfId(id).forEach(n -> {
                    if (!subjects.contains(n.get("subject").asText())) {
                        subjects.add(n.get("subject").asText());
                    }
                });
                yield ok(JSON.valueToTree(subjects));
            }
            default -> throw new ApiError(404, 404, "HTTP 404 Not Found");
        };
    }

    private Reply config(String method, List<String> path, byte[] body, String query) {
        if (path.size() > 2) {
            throw new ApiError(404, 404, "HTTP 404 Not Found");
        }
        String subject = path.size() == 2 ? path.get(1) : null;
        return switch (method) {
            case "GET" -> ok(JSON.createObjectNode().put("compatibilityLevel", subject == null ? store.globalLevel()
                    : store.subjectLevel(subject, queryFlag(query, "defaultToGlobal"))));
            case "PUT" -> {
                JsonNode node = json(body);
                String level = node.path("compatibility").asText(node.path("compatibilityLevel").asText(null));
                yield ok(JSON.createObjectNode().put("compatibility",
                        subject == null ? store.setGlobalLevel(level) : store.setSubjectLevel(subject, level)));
            }
            case "DELETE" -> ok(JSON.createObjectNode().put("compatibilityLevel", subject == null
                    ? store.setGlobalLevel("BACKWARD") : store.deleteSubjectLevel(subject)));
            default -> null;
        };
    }

    private Reply compatibility(String method, List<String> path, byte[] body, String query) {
        if (path.size() < 4 || path.size() > 5 || !path.get(1).equals("subjects") || !path.get(3).equals("versions")) {
            throw new ApiError(404, 404, "HTTP 404 Not Found");
        }
        if (!method.equals("POST")) {
            return null;
        }
        SchemaBody b = schemaBody(body);
        List<String> problems = store.compatibility(path.get(2), path.size() == 5 ? path.get(4) : null, b.text, b.references);
        ObjectNode out = JSON.createObjectNode().put("is_compatible", problems.isEmpty());
        if (queryFlag(query, "verbose")) {
            out.set("messages", JSON.valueToTree(problems));
        }
        return ok(out);
    }

    private static Reply ok(Object body) {
        return new Reply(200, body);
    }

    private static boolean queryFlag(String query, String name) {
        if (query == null) {
            return false;
        }
        for (String part : query.split("&")) {
            if (part.equalsIgnoreCase(name + "=true")) {
                return true;
            }
        }
        return false;
    }

    private record SchemaBody(String text, List<RegistryStore.Reference> references) {
    }

    private static JsonNode json(byte[] body) {
        try {
            JsonNode node = JSON.readTree(body);
            if (node == null || !node.isObject()) {
                throw new ApiError(422, 422, "Unrecognized request body: a JSON object is required");
            }
            return node;
        } catch (IOException e) {
            throw new ApiError(400, 400, "Unrecognized request body: " + e.getMessage());
        }
    }

    private static SchemaBody schemaBody(byte[] body) {
        JsonNode node = json(body);
        if (!node.path("schema").isTextual()) {
            throw new ApiError(422, 42201, "Invalid schema: the body has no 'schema' text");
        }
        JsonNode type = node.get("schemaType");
        if (type != null && !type.isNull() && !"AVRO".equalsIgnoreCase(type.asText())) {
            throw new ApiError(422, 42201, "Invalid schema: only AVRO is supported, got " + type.asText());
        }
        List<RegistryStore.Reference> refs = new ArrayList<>();
        for (JsonNode r : node.path("references")) {
            if (!r.path("name").isTextual() || !r.path("subject").isTextual() || !r.path("version").canConvertToInt()) {
                throw new ApiError(422, 42201, "Invalid schema: a reference needs 'name', 'subject' and 'version', got " + r);
            }
            refs.add(new RegistryStore.Reference(r.get("name").asText(), r.get("subject").asText(), r.get("version").asInt()));
        }
        return new SchemaBody(node.get("schema").asText(), refs);
    }

    private static int parseInt(String text, int errorCode, String message) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw new ApiError(errorCode == 40403 ? 404 : 422, errorCode, message);
        }
    }

    private static List<String> segments(String rawPath) {
        List<String> out = new ArrayList<>();
        for (String part : rawPath.split("/")) {
            if (!part.isEmpty()) {
                out.add(URLDecoder.decode(part.replace("+", "%2B"), StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    private static ObjectNode error(int code, String message) {
        return JSON.createObjectNode().put("error_code", code).put("message", message);
    }

    /** {@code body}: a JsonNode, or a String sent as is (a bare schema). */
    private record Reply(int status, Object body) {
    }
}
