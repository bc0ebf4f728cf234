package dev.sluice.sender.telegram;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.sender.provider.BotToken;
import dev.sluice.sender.provider.SendOutcome;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 19: the sending threads call at once, so each holds a connection; after such a burst the next one must find
 * them kept alive instead of connecting anew (OkHttp's default pool keeps only 5 idle connections, so the 6th to 12th
 * were closed after every burst and reopened for the next). Counted on a real local HTTP server by the client ports
 * it saw.
 */
class TelegramConnectionReuseTest {
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456789");
    private static final int THREADS = 12;
    private static final String OK = "{\"ok\":true,\"result\":{\"message_id\":7,\"date\":1,\"chat\":{\"id\":42,"
            + "\"type\":\"private\"},\"text\":\"hi\"}}";

    private final Set<Integer> clientPorts = ConcurrentHashMap.newKeySet();
    private volatile CountDownLatch allArrived;
    private HttpServer server;
    private ExecutorService serverThreads;
    private ExecutorService callers;

    @BeforeEach
    void start() throws IOException {
        serverThreads = Executors.newFixedThreadPool(THREADS);
        callers = Executors.newFixedThreadPool(THREADS);
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        server.setExecutor(serverThreads);
        server.createContext("/", exchange -> {
            clientPorts.add(exchange.getRemoteAddress().getPort());
            exchange.getRequestBody().readAllBytes();
            CountDownLatch burst = allArrived;
            burst.countDown();
            try {
                burst.await(10, TimeUnit.SECONDS); // answer once the whole burst is in flight: one connection each
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            byte[] bytes = OK.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        server.start();
    }

    @AfterEach
    void stop() {
        callers.shutdownNow();
        server.stop(0);
        serverThreads.shutdownNow();
    }

    @Test
    void a_burst_as_wide_as_the_sending_threads_reuses_the_connections_of_the_burst_before() throws Exception {
        try (TelegramTransport transport = new TelegramTransport("http://127.0.0.1:" + server.getAddress().getPort()
                + "/bot", Map.of("alerts", new BotToken(TOKEN)), Duration.ofSeconds(5), Duration.ofSeconds(15),
                Set.of(), THREADS)) {
            burst(transport);
            assertThat(clientPorts).hasSize(THREADS);
            burst(transport);
            burst(transport);
            assertThat(clientPorts).as("connections opened over three bursts of %d calls", THREADS).hasSize(THREADS);
        }
    }

    private void burst(TelegramTransport transport) throws Exception {
        allArrived = new CountDownLatch(THREADS);
        List<Future<SendOutcome>> calls = new ArrayList<>();
        for (int i = 0; i < THREADS; i++) {
            calls.add(callers.submit(() -> transport.send("alerts", "42", "hi", null)));
        }
        for (Future<SendOutcome> call : calls) {
            assertThat(call.get(20, TimeUnit.SECONDS)).isEqualTo(new SendOutcome.Delivered(7));
        }
    }
}
