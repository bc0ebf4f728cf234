package dev.sluice.sender.telegram;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.sender.provider.BotToken;
import dev.sluice.sender.provider.SendOutcome;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The transport against a real local HTTP server answering like the Bot API. */
class TelegramTransportTest {
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456789");
    private HttpServer server;
    private final List<String> paths = new CopyOnWriteArrayList<>();
    private volatile int status;
    private volatile String contentType;
    private volatile String body;
    private TelegramTransport transport;

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            paths.add(exchange.getRequestURI().getPath());
            exchange.getRequestBody().readAllBytes();
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", contentType);
            exchange.sendResponseHeaders(status, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        server.start();
        transport = new TelegramTransport("http://127.0.0.1:" + server.getAddress().getPort() + "/bot",
                Map.of("alerts", new BotToken(TOKEN)), Duration.ofSeconds(2), Duration.ofSeconds(2));
    }

    @AfterEach
    void stop() {
        transport.close();
        server.stop(0);
    }

    private void answer(int code, String json) {
        status = code;
        contentType = "application/json";
        body = json;
    }

    @Test
    void ok_is_delivered_with_the_provider_message_id_and_the_token_in_the_path() {
        answer(200, "{\"ok\":true,\"result\":{\"message_id\":777,\"date\":1,\"chat\":{\"id\":42,\"type\":\"private\"},"
                + "\"text\":\"hi\"}}");
        assertThat(transport.send("alerts", "42", "hi", null)).isEqualTo(new SendOutcome.Delivered(777));
        assertThat(paths).containsExactly("/bot" + TOKEN + "/sendMessage");
    }

    @Test
    void too_many_requests_carries_retry_after() {
        answer(429, "{\"ok\":false,\"error_code\":429,\"description\":\"Too Many Requests: retry after 32\","
                + "\"parameters\":{\"retry_after\":32}}");
        SendOutcome o = transport.send("alerts", "42", "hi", "HTML");
        assertThat(o).isInstanceOf(SendOutcome.RetryAfter.class);
        assertThat(((SendOutcome.RetryAfter) o).retryAfter()).isEqualTo(Duration.ofSeconds(32));
    }

    @Test
    void forbidden_is_blocked_bad_request_is_permanent_migration_is_reported() {
        answer(403, "{\"ok\":false,\"error_code\":403,\"description\":\"Forbidden: bot was blocked by the user\"}");
        assertThat(transport.send("alerts", "42", "hi", null))
                .isEqualTo(new SendOutcome.Blocked(403, "Forbidden: bot was blocked by the user"));
        answer(400, "{\"ok\":false,\"error_code\":400,\"description\":\"Bad Request: chat not found\"}");
        assertThat(transport.send("alerts", "42", "hi", null))
                .isEqualTo(new SendOutcome.PermanentFailure(400, "Bad Request: chat not found"));
        answer(400, "{\"ok\":false,\"error_code\":400,\"description\":\"Bad Request: group chat was upgraded to a "
                + "supergroup chat\",\"parameters\":{\"migrate_to_chat_id\":-1001234567890}}");
        assertThat(transport.send("alerts", "-42", "hi", null)).isInstanceOf(SendOutcome.ChatMigrated.class)
                .extracting(o -> ((SendOutcome.ChatMigrated) o).newChatId()).isEqualTo(-1001234567890L);
    }

    @Test
    void unauthorized_and_not_found_reject_the_token_not_the_message() {
        answer(401, "{\"ok\":false,\"error_code\":401,\"description\":\"Unauthorized\"}");
        assertThat(transport.send("alerts", "42", "hi", null)).isEqualTo(new SendOutcome.TokenRejected(401, "Unauthorized"));
        answer(404, "{\"ok\":false,\"error_code\":404,\"description\":\"Not Found\"}");
        assertThat(transport.send("alerts", "42", "hi", null)).isEqualTo(new SendOutcome.TokenRejected(404, "Not Found"));
    }

    @Test
    void server_errors_even_with_an_html_body_are_transient() {
        status = 502;
        contentType = "text/html";
        body = "<html>Bad Gateway</html>";
        SendOutcome o = transport.send("alerts", "42", "hi", null);
        assertThat(o).isInstanceOf(SendOutcome.TransientFailure.class);
        assertThat(((SendOutcome.TransientFailure) o).errorCode()).isEqualTo(502);
    }

    @Test
    void a_connection_refused_is_transient_not_sent_and_never_shows_the_token() throws IOException {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        try (TelegramTransport dead = new TelegramTransport("http://127.0.0.1:" + closedPort + "/bot",
                Map.of("alerts", new BotToken(TOKEN)), Duration.ofSeconds(1), Duration.ofSeconds(1))) {
            SendOutcome o = dead.send("alerts", "42", "hi", null);
            assertThat(o).isInstanceOf(SendOutcome.TransientFailure.class);
            assertThat(((SendOutcome.TransientFailure) o).maybeDelivered()).isFalse();
            assertThat(o.toString()).doesNotContain(TOKEN).doesNotContain("AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw");
        }
        assertThat(transport.toString()).doesNotContain(TOKEN);
        assertThat(new BotToken(TOKEN).toString()).isEqualTo("[redacted]");
    }

    /**
     * The whole-call bound strikes while the call still waits for its TCP connection (a listener whose accept queue is
     * full drops the SYN, so the connect hangs past the call's bound): nothing was written, so the provider cannot have
     * it — retried like a connect error, not ended UNCERTAIN (the same as a process stopped between the start of its call
     * and its write: the call's timer fires at once when it runs again; found by SenderPauseIT, a result UNCERTAIN for a
     * message the provider never received).
     */
    @Test
    void a_call_timing_out_before_its_request_is_written_is_transient_not_uncertain() throws IOException {
        try (ServerSocket full = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            List<java.net.Socket> queued = new java.util.ArrayList<>();
            try {
                InetSocketAddress at = new InetSocketAddress(full.getInetAddress(), full.getLocalPort());
                for (int i = 0; i < 4; i++) { // fill the accept queue (backlog 1): the later connects hang
                    java.net.Socket s = new java.net.Socket();
                    try {
                        s.connect(at, 200);
                        queued.add(s);
                    } catch (java.net.SocketTimeoutException e) {
                        s.close();
                        break; // the queue is full: a connect now hangs
                    }
                }
                try (TelegramTransport stuck = new TelegramTransport("http://127.0.0.1:" + full.getLocalPort() + "/bot",
                        Map.of("alerts", new BotToken(TOKEN)), Duration.ofSeconds(5), Duration.ofMillis(300))) {
                    long start = System.nanoTime();
                    SendOutcome o = stuck.send("alerts", "42", "hi", null);
                    assertThat(Duration.ofNanos(System.nanoTime() - start)).as("the call's bound, not the connect's")
                            .isLessThan(Duration.ofSeconds(3));
                    assertThat(o).isInstanceOf(SendOutcome.TransientFailure.class);
                    assertThat(((SendOutcome.TransientFailure) o).description()).contains("timeout");
                    assertThat(((SendOutcome.TransientFailure) o).maybeDelivered()).as("nothing was written").isFalse();
                }
            } finally {
                for (java.net.Socket s : queued) {
                    s.close();
                }
            }
        }
    }

    /** The request was written and no answer came within the call's bound: the provider may have it (UNCERTAIN). */
    @Test
    void a_call_timing_out_after_its_request_was_written_may_have_been_delivered() throws IOException {
        java.util.concurrent.CountDownLatch read = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        HttpServer silent = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        silent.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            read.countDown();
            try {
                release.await(10, java.util.concurrent.TimeUnit.SECONDS); // no answer within the call's bound
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            exchange.close();
        });
        silent.setExecutor(java.util.concurrent.Executors.newSingleThreadExecutor());
        silent.start();
        try (TelegramTransport slow = new TelegramTransport("http://127.0.0.1:" + silent.getAddress().getPort() + "/bot",
                Map.of("alerts", new BotToken(TOKEN)), Duration.ofSeconds(2), Duration.ofMillis(300))) {
            SendOutcome o = slow.send("alerts", "42", "hi", null);
            assertThat(read.getCount()).as("the server read the whole request").isZero();
            assertThat(o).isInstanceOf(SendOutcome.TransientFailure.class);
            assertThat(((SendOutcome.TransientFailure) o).maybeDelivered()).isTrue();
        } finally {
            release.countDown();
            silent.stop(0);
            ((java.util.concurrent.ExecutorService) silent.getExecutor()).shutdownNow();
        }
    }

    @Test
    void a_description_echoing_the_token_is_redacted() {
        answer(400, "{\"ok\":false,\"error_code\":400,\"description\":\"Bad Request: bot" + TOKEN + " is odd\"}");
        SendOutcome o = transport.send("alerts", "42", "hi", null);
        assertThat(o.toString()).doesNotContain(TOKEN).contains("[redacted]");
    }
}
