package dev.sluice.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.avro.Schema;
import org.apache.avro.SchemaParseException;

/**
 * An in-process schema registry serving the Confluent Schema Registry REST subset Sluice uses, on
 * 127.0.0.1 and a free port (JDK {@code com.sun.net.httpserver}), for tests and the embedded demo.
 *
 * <p>Endpoints (bodies {@code application/vnd.schemaregistry.v1+json}):
 * <ul>
 *   <li>{@code POST /subjects/{s}/versions} {@code {"schema":"..."}} → {@code {"id":N}}: ids are global
 *       and increasing from 1; the same schema (after parsing, so whitespace does not matter) gets the
 *       same id under every subject; registering again under the same subject is idempotent.</li>
 *   <li>{@code GET /schemas/ids/{id}} → {@code {"schema":"..."}}</li>
 *   <li>{@code GET /subjects} → {@code ["s1",...]}; {@code GET /subjects/{s}/versions} → {@code [1,2]}</li>
 *   <li>{@code GET /subjects/{s}/versions/{v|latest}} and {@code POST /subjects/{s}} (lookup) →
 *       {@code {"subject","version","id","schema"}}</li>
 * </ul>
 * Errors in Confluent style, e.g. HTTP 404 {@code {"error_code":40403,"message":"Schema not found"}};
 * 40401 subject not found, 40402 version not found, 42201 invalid schema, 42202 invalid version.
 * Only Avro; no compatibility checks, no deletes, state in memory only.
 *
 * <p>For fault-injection tests: {@link #requireBasicAuth}, {@link #failNextRequests}, {@link #injectFaults}
 * and {@link #requestCount}.
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

    // Guarded by "this".
    private final Map<String, Integer> idBySchemaText = new HashMap<>();
    private final Map<Integer, String> schemaTextById = new HashMap<>();
    private final Map<String, List<Integer>> versionsBySubject = new TreeMap<>();
    private int nextId = 1;

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
    public synchronized int schemaCount() {
        return schemaTextById.size();
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
            byte[] body = JSON.writeValueAsBytes(reply.body);
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
        byte[] body;
        try (InputStream in = exchange.getRequestBody()) {
            body = in.readAllBytes();
        }
        if (path.size() == 3 && path.get(0).equals("schemas") && path.get(1).equals("ids") && method.equals("GET")) {
            return new Reply(200, schemaById(parseInt(path.get(2), 40403, "Schema not found")));
        }
        if (path.size() == 1 && path.get(0).equals("subjects") && method.equals("GET")) {
            synchronized (this) {
                return new Reply(200, JSON.valueToTree(new ArrayList<>(versionsBySubject.keySet())));
            }
        }
        if (path.size() >= 2 && path.get(0).equals("subjects")) {
            String subject = path.get(1);
            if (path.size() == 2 && method.equals("POST")) {
                return new Reply(200, lookup(subject, schemaText(body)));
            }
            if (path.size() == 3 && path.get(2).equals("versions") && method.equals("POST")) {
                return new Reply(200, JSON.createObjectNode().put("id", register(subject, schemaText(body))));
            }
            if (path.size() == 3 && path.get(2).equals("versions") && method.equals("GET")) {
                synchronized (this) {
                    List<Integer> versions = subjectVersions(subject);
                    List<Integer> numbers = new ArrayList<>();
                    for (int v = 1; v <= versions.size(); v++) {
                        numbers.add(v);
                    }
                    return new Reply(200, JSON.valueToTree(numbers));
                }
            }
            if (path.size() == 4 && path.get(2).equals("versions") && method.equals("GET")) {
                return new Reply(200, version(subject, path.get(3)));
            }
        }
        boolean known = path.size() >= 1 && (path.get(0).equals("subjects") || path.get(0).equals("schemas"));
        throw known ? new ApiError(405, 405, "HTTP 405 Method Not Allowed") : new ApiError(404, 404, "HTTP 404 Not Found");
    }

    private synchronized int register(String subject, String schemaText) {
        String canonical = parse(schemaText);
        Integer id = idBySchemaText.get(canonical);
        if (id == null) {
            id = nextId++;
            idBySchemaText.put(canonical, id);
            schemaTextById.put(id, canonical);
        }
        List<Integer> versions = versionsBySubject.computeIfAbsent(subject, s -> new ArrayList<>());
        if (!versions.contains(id)) {
            versions.add(id);
        }
        return id;
    }

    private synchronized JsonNode lookup(String subject, String schemaText) {
        List<Integer> versions = subjectVersions(subject);
        Integer id = idBySchemaText.get(parse(schemaText));
        int index = id == null ? -1 : versions.indexOf(id);
        if (index < 0) {
            throw new ApiError(404, 40403, "Schema not found");
        }
        return versionNode(subject, index + 1, id);
    }

    private synchronized JsonNode version(String subject, String versionText) {
        List<Integer> versions = subjectVersions(subject);
        int version = versionText.equals("latest") || versionText.equals("-1") ? versions.size() : parseInt(versionText, 42202,
                "The specified version '" + versionText + "' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\"");
        if (version < 1 || version > versions.size()) {
            throw new ApiError(404, 40402, "Version " + versionText + " not found.");
        }
        return versionNode(subject, version, versions.get(version - 1));
    }

    private synchronized JsonNode schemaById(int id) {
        String text = schemaTextById.get(id);
        if (text == null) {
            throw new ApiError(404, 40403, "Schema " + id + " not found");
        }
        return JSON.createObjectNode().put("schema", text);
    }

    private List<Integer> subjectVersions(String subject) {
        List<Integer> versions = versionsBySubject.get(subject);
        if (versions == null) {
            throw new ApiError(404, 40401, "Subject '" + subject + "' not found.");
        }
        return versions;
    }

    private JsonNode versionNode(String subject, int version, int id) {
        return JSON.createObjectNode().put("subject", subject).put("version", version).put("id", id)
                .put("schema", schemaTextById.get(id));
    }

    private static String schemaText(byte[] body) {
        JsonNode node;
        try {
            node = JSON.readTree(body);
        } catch (IOException e) {
            throw new ApiError(400, 400, "Unrecognized request body: " + e.getMessage());
        }
        if (node == null || !node.path("schema").isTextual()) {
            throw new ApiError(422, 42201, "Invalid schema: the body has no 'schema' text");
        }
        JsonNode type = node.get("schemaType");
        if (type != null && !type.isNull() && !"AVRO".equalsIgnoreCase(type.asText())) {
            throw new ApiError(422, 42201, "Invalid schema: only AVRO is supported, got " + type.asText());
        }
        return node.get("schema").asText();
    }

    /** Parses and re-serialises, so the same schema in different whitespace gets the same id. */
    private static String parse(String schemaText) {
        try {
            return new Schema.Parser().parse(schemaText).toString();
        } catch (SchemaParseException | NullPointerException e) {
            throw new ApiError(422, 42201, "Invalid schema: " + e.getMessage());
        }
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

    private record Reply(int status, JsonNode body) {
    }

    private static final class ApiError extends RuntimeException {
        final int status;
        final int code;

        ApiError(int status, int code, String message) {
            super(message);
            this.status = status;
            this.code = code;
        }
    }
}
