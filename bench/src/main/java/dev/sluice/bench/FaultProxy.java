package dev.sluice.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An HTTP pass-through in front of FakeTelegram that can answer every request with a 5xx for a while:
 * the "provider answering 5xx for 20 s" fault of the chaos scenario. FakeTelegram's own
 * {@code enqueueForBot(serverError)} fails a number of requests, not a time span, so the time-boxed
 * outage lives here. Requests during the outage never reach FakeTelegram (nothing is accepted).
 */
public final class FaultProxy implements AutoCloseable {
    static {
        dev.sluice.testkit.JdkHttpServerNoDelay.enable(); // before this JVM's first HttpServer: no 40 ms Nagle stalls
    }

    private static final String BAD_GATEWAY = "{\"ok\":false,\"error_code\":502,\"description\":\"Bad Gateway\"}";

    private final HttpServer server;
    private final ExecutorService executor = Executors.newFixedThreadPool(32);
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String target;
    private volatile long failUntilMillis;
    private final AtomicLong failed = new AtomicLong();

    /** @param targetUrl FakeTelegram's root, e.g. {@code http://127.0.0.1:PORT} */
    public FaultProxy(String targetUrl) throws IOException {
        this.target = targetUrl;
        this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 128);
        server.createContext("/", this::handle);
        server.setExecutor(executor);
        server.start();
    }

    /** The pengrad apiUrl form, {@code http://127.0.0.1:PORT/bot}. */
    public String apiUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/bot";
    }

    /** Every request in the next {@code d} gets 502. */
    public void failFor(Duration d) {
        failUntilMillis = System.currentTimeMillis() + d.toMillis();
    }

    public long failedRequests() {
        return failed.get();
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            byte[] body = ex.getRequestBody().readAllBytes();
            if (System.currentTimeMillis() < failUntilMillis) {
                failed.incrementAndGet();
                reply(ex, 502, BAD_GATEWAY.getBytes(StandardCharsets.UTF_8));
                return;
            }
            HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(target + ex.getRequestURI()))
                    .timeout(Duration.ofSeconds(30))
                    .method(ex.getRequestMethod(), HttpRequest.BodyPublishers.ofByteArray(body));
            String ct = ex.getRequestHeaders().getFirst("Content-Type");
            if (ct != null) {
                rb.header("Content-Type", ct);
            }
            HttpResponse<byte[]> r = http.send(rb.build(), HttpResponse.BodyHandlers.ofByteArray());
            reply(ex, r.statusCode(), r.body());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void reply(HttpExchange ex, int status, byte[] body) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
