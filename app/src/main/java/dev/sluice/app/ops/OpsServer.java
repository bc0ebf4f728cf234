package dev.sluice.app.ops;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ops endpoints of one long-running process, on the JDK's built-in HTTP server:
 * <ul>
 *   <li>{@code GET /metrics}: Prometheus text exposition format 0.0.4 of the process registry
 *       (OpenMetrics when the scraper asks for {@code application/openmetrics-text});</li>
 *   <li>{@code GET /health/live}: 200 while the process is alive, else 503;</li>
 *   <li>{@code GET /health/ready}: 200 when the process does its job (see {@link HealthCheck}), else 503.</li>
 * </ul>
 * Health bodies are small JSON objects: {@code {"status":"UP","checks":{"streams":"RUNNING"}}}.
 * Two daemon threads answer, so a slow scrape never blocks a probe for long. A client gets
 * {@link #MAX_REQUEST_SECONDS} s to send its request line and headers, then the JDK closes the connection
 * ({@code sun.net.httpserver.maxReqTime}, set by {@code JdkHttpServerNoDelay}): clients that connect and stall
 * cannot hold the workers and block {@code /health} (tested with stalled sockets in {@code OpsServerTest}).
 */
public final class OpsServer implements AutoCloseable {
    static {
        dev.sluice.testkit.JdkHttpServerNoDelay.enable(); // before this JVM's first HttpServer: no 40 ms Nagle stalls
    }

    /** Threads answering requests. */
    public static final int WORKER_THREADS = 2;
    /** Seconds a client may take to send a request's line and headers; then the connection is closed. */
    public static final int MAX_REQUEST_SECONDS = dev.sluice.testkit.JdkHttpServerNoDelay.MAX_REQUEST_SECONDS;

    private static final Logger log = LoggerFactory.getLogger(OpsServer.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

    private final HttpServer server;
    private final ExecutorService executor;

    private OpsServer(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    /**
     * Starts serving.
     *
     * @throws UncheckedIOException when the address cannot be bound (e.g. the port is taken), naming it
     */
    public static OpsServer start(OpsConfig config, PrometheusMeterRegistry registry, HealthCheck liveness,
                                  HealthCheck readiness) {
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(liveness, "liveness");
        Objects.requireNonNull(readiness, "readiness");
        HttpServer server;
        InetSocketAddress address = new InetSocketAddress(config.bindAddress(), config.port());
        try {
            server = HttpServer.create(address, 16);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot serve ops endpoints on " + config.bindAddress() + ":" + config.port()
                    + " (" + OpsConfig.PORT + " / " + OpsConfig.BIND_ADDRESS + "): " + e.getMessage(), e);
        }
        AtomicInteger n = new AtomicInteger();
        ExecutorService executor = Executors.newFixedThreadPool(WORKER_THREADS, r -> {
            Thread t = new Thread(r, "sluice-ops-http-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/metrics", ex -> handle(ex, () -> metrics(ex, registry)));
        server.createContext("/health/live", ex -> handle(ex, () -> health(ex, liveness)));
        server.createContext("/health/ready", ex -> handle(ex, () -> health(ex, readiness)));
        server.createContext("/", ex -> handle(ex, () -> send(ex, 404, "text/plain; charset=utf-8",
                "not found; try /metrics, /health/live, /health/ready\n")));
        server.start();
        OpsServer ops = new OpsServer(server, executor);
        log.info("ops endpoints on {} (/metrics, /health/live, /health/ready)", ops.uri());
        return ops;
    }

    /** The port actually bound (useful with {@code ops.port=0}). */
    public int port() {
        return server.getAddress().getPort();
    }

    /** Base URI, e.g. {@code http://0.0.0.0:9464}. */
    public URI uri() {
        return URI.create("http://" + server.getAddress().getHostString() + ":" + port());
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }

    private interface Handler {
        void run() throws IOException;
    }

    private static void handle(HttpExchange ex, Handler handler) {
        try (ex) {
            String method = ex.getRequestMethod();
            if (!method.equals("GET") && !method.equals("HEAD")) {
                ex.getResponseHeaders().set("Allow", "GET, HEAD");
                send(ex, 405, "text/plain; charset=utf-8", "method not allowed\n");
                return;
            }
            handler.run();
        } catch (IOException | RuntimeException e) {
            log.warn("ops endpoint {} failed: {}", ex.getRequestURI().getPath(), e.toString());
        }
    }

    private static void metrics(HttpExchange ex, PrometheusMeterRegistry registry) throws IOException {
        String accept = ex.getRequestHeaders().getFirst("Accept");
        String contentType = accept != null && accept.contains("application/openmetrics-text")
                ? "application/openmetrics-text; version=1.0.0; charset=utf-8" : PROMETHEUS_TEXT;
        send(ex, 200, contentType, registry.scrape(contentType));
    }

    private static void health(HttpExchange ex, HealthCheck check) throws IOException {
        Health h;
        try {
            h = check.check();
        } catch (RuntimeException e) {
            h = Health.down(Map.of("error", e.getClass().getSimpleName()));
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", h.up() ? "UP" : "DOWN");
        body.put("checks", new java.util.TreeMap<>(h.details()));
        send(ex, h.up() ? 200 : 503, "application/json", JSON.writeValueAsString(body));
    }

    private static void send(HttpExchange ex, int status, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", contentType);
        ex.getResponseHeaders().set("Cache-Control", "no-store");
        boolean head = ex.getRequestMethod().equals("HEAD");
        ex.sendResponseHeaders(status, head ? -1 : bytes.length);
        if (!head) {
            try (OutputStream out = ex.getResponseBody()) {
                out.write(bytes);
            }
        }
    }
}
