package dev.sluice.app.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.NotificationClass;
import dev.sluice.config.Settings;
import dev.sluice.metrics.BudgetState;
import dev.sluice.metrics.SenderMetrics;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class OpsServerTest {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private ProcessMetrics metrics;
    private OpsServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
        if (metrics != null) {
            metrics.close();
        }
    }

    /**
     * F13: the JDK server reads request headers on a worker thread with no time limit by default, so clients that
     * send "G" and stall take every worker and /health stops answering. With the request time bounded, the
     * stalled connections are closed and /health answers within that bound.
     */
    @Test
    void clientsThatStallMidRequestCannotBlockHealth() throws Exception {
        metrics = ProcessMetrics.create("sender");
        server = OpsServer.start(new OpsConfig(true, "127.0.0.1", 0), metrics.registry(), HealthCheck.alwaysUp(), HealthCheck.alwaysUp());
        List<java.net.Socket> stalled = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < OpsServer.WORKER_THREADS * 2; i++) {
                java.net.Socket s = new java.net.Socket("127.0.0.1", server.port());
                s.getOutputStream().write('G');
                s.getOutputStream().flush();
                stalled.add(s);
            }
            long start = System.nanoTime();
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/health/live"))
                    .timeout(Duration.ofSeconds(OpsServer.MAX_REQUEST_SECONDS + 4)).build(), HttpResponse.BodyHandlers.ofString());
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(tookMs).as("health answered within the request bound plus the JDK's 1 s timer")
                    .isLessThan((OpsServer.MAX_REQUEST_SECONDS + 2) * 1000L);
            // The stalled clients were cut off, not served: their connection is closed by the server.
            java.net.Socket first = stalled.get(0);
            first.setSoTimeout(5000);
            assertThat(first.getInputStream().read()).isEqualTo(-1);
        } finally {
            for (java.net.Socket s : stalled) {
                s.close();
            }
        }
    }

    @Test
    void servesPrometheusTextWithSluiceAndJvmMetrics() throws Exception {
        metrics = ProcessMetrics.create("sender");
        SenderMetrics sender = SenderMetrics.bind(metrics.registry(), List.of("alerts"), BudgetState.SHARED);
        sender.result(DeliveryStatus.DELIVERED, NotificationClass.CRITICAL);
        sender.lag(NotificationClass.CRITICAL, Duration.ofMillis(250));
        server = OpsServer.start(new OpsConfig(true, "127.0.0.1", 0), metrics.registry(), HealthCheck.alwaysUp(), HealthCheck.alwaysUp());

        HttpResponse<String> r = get("/metrics");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/plain"));
        assertThat(r.body())
                .contains("sluice_sender_results_total{class=\"CRITICAL\",process=\"sender\",status=\"DELIVERED\"} 1.0")
                .contains("sluice_delivery_lag_seconds_bucket{class=\"CRITICAL\"")
                .contains("sluice_delivery_lag_seconds_count{class=\"CRITICAL\",process=\"sender\"} 1")
                .contains("sluice_budget_mode{mode=\"shared\",process=\"sender\"} 1.0")
                .contains("jvm_memory_used_bytes");
    }

    @Test
    void readinessFollowsTheSupplierWith200Or503AndAJsonBody() throws Exception {
        metrics = ProcessMetrics.create("sender");
        AtomicBoolean consumerRunning = new AtomicBoolean(false);
        AtomicReference<BudgetState> mode = new AtomicReference<>(BudgetState.SHARED);
        HealthCheck ready = HealthCheck.senderReady(consumerRunning::get, mode::get, Set.of(BudgetState.FALLBACK_LOCAL));
        server = OpsServer.start(new OpsConfig(true, "127.0.0.1", 0), metrics.registry(), HealthCheck.alwaysUp(), ready);

        assertThat(get("/health/live").statusCode()).isEqualTo(200);
        HttpResponse<String> notReady = get("/health/ready");
        assertThat(notReady.statusCode()).isEqualTo(503);
        assertThat(notReady.body()).isEqualTo("{\"status\":\"DOWN\",\"checks\":{\"budget_mode\":\"shared\",\"consumer\":\"stopped\"}}");

        consumerRunning.set(true);
        assertThat(get("/health/ready").statusCode()).isEqualTo(200);
        mode.set(BudgetState.FALLBACK_LOCAL); // an allowed fallback
        assertThat(get("/health/ready").statusCode()).isEqualTo(200);
        mode.set(BudgetState.PAUSED); // fail-closed: not doing its job
        HttpResponse<String> paused = get("/health/ready");
        assertThat(paused.statusCode()).isEqualTo(503);
        assertThat(paused.body()).contains("\"budget_mode\":\"paused\"");
    }

    @Test
    void aBotWhoseTokenTheProviderRejectsMakesTheSenderNotReadyNamingTheBotOnly() throws Exception {
        metrics = ProcessMetrics.create("sender");
        AtomicReference<Set<String>> rejected = new AtomicReference<>(Set.of());
        HealthCheck ready = HealthCheck.senderReady(() -> true, () -> BudgetState.SHARED, Set.of(), rejected::get);
        server = OpsServer.start(new OpsConfig(true, "127.0.0.1", 0), metrics.registry(), HealthCheck.alwaysUp(), ready);
        assertThat(get("/health/ready").statusCode()).isEqualTo(200);
        rejected.set(Set.of("quakes")); // issue 16: 401/404 for bot quakes; its lanes are parked
        HttpResponse<String> notReady = get("/health/ready");
        assertThat(notReady.statusCode()).isEqualTo(503);
        assertThat(notReady.body()).contains("\"token_rejected\":\"quakes\"");
        rejected.set(Set.of()); // the re-check was accepted
        assertThat(get("/health/ready").statusCode()).isEqualTo(200);
    }

    enum FakeStreamsState { CREATED, REBALANCING, RUNNING, ERROR }

    @Test
    void topologyReadyOnlyWhileStreamsRunningAndDeadAfterError() throws Exception {
        metrics = ProcessMetrics.create("topology");
        AtomicReference<FakeStreamsState> state = new AtomicReference<>(FakeStreamsState.CREATED);
        server = OpsServer.start(new OpsConfig(true, "127.0.0.1", 0), metrics.registry(),
                HealthCheck.streamsAlive(state::get), HealthCheck.streamsRunning(state::get));
        assertThat(get("/health/ready").statusCode()).isEqualTo(503);
        state.set(FakeStreamsState.RUNNING);
        HttpResponse<String> ready = get("/health/ready");
        assertThat(ready.statusCode()).isEqualTo(200);
        assertThat(ready.body()).isEqualTo("{\"status\":\"UP\",\"checks\":{\"streams\":\"RUNNING\"}}");
        state.set(FakeStreamsState.REBALANCING);
        assertThat(get("/health/ready").statusCode()).isEqualTo(503);
        assertThat(get("/health/live").statusCode()).isEqualTo(200);
        state.set(FakeStreamsState.ERROR);
        assertThat(get("/health/live").statusCode()).isEqualTo(503);
    }

    @Test
    void aThrowingCheckIsDownNotAHangAndUnknownPathsAre404() throws Exception {
        metrics = ProcessMetrics.create("sender");
        server = OpsServer.start(new OpsConfig(true, "127.0.0.1", 0), metrics.registry(), HealthCheck.alwaysUp(),
                () -> {
                    throw new IllegalStateException("boom");
                });
        HttpResponse<String> r = get("/health/ready");
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.body()).contains("IllegalStateException");
        assertThat(get("/nope").statusCode()).isEqualTo(404);
        HttpResponse<String> post = http.send(HttpRequest.newBuilder(URI.create(server.uri() + "/metrics"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(post.statusCode()).isEqualTo(405);
    }

    @Test
    void aTakenPortFailsWithTheKeyNamed() {
        metrics = ProcessMetrics.create("sender");
        server = OpsServer.start(new OpsConfig(true, "127.0.0.1", 0), metrics.registry(), HealthCheck.alwaysUp(), HealthCheck.alwaysUp());
        assertThatThrownBy(() -> OpsServer.start(new OpsConfig(true, "127.0.0.1", server.port()), metrics.registry(),
                HealthCheck.alwaysUp(), HealthCheck.alwaysUp()))
                .isInstanceOf(UncheckedIOException.class).hasMessageContaining("ops.port").hasMessageContaining(":" + server.port());
    }

    @Test
    void configReadsKeysAndEnvironmentWithPerProcessDefaults() {
        assertThat(OpsConfig.from(Settings.empty(), OpsConfig.SENDER_DEFAULT_PORT))
                .isEqualTo(new OpsConfig(true, "0.0.0.0", 9465));
        Settings env = Settings.empty().withEnvironment(Map.of("SLUICE_OPS_PORT", "19464", "SLUICE_OPS_BIND_ADDRESS", "127.0.0.1"));
        assertThat(OpsConfig.from(env, OpsConfig.TOPOLOGY_DEFAULT_PORT)).isEqualTo(new OpsConfig(true, "127.0.0.1", 19464));
        assertThatThrownBy(() -> OpsConfig.from(Settings.of(Map.of("ops.port", "70000")), 9464))
                .hasMessageContaining("ops.port").hasMessageContaining("70000");
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(server.uri() + path)).timeout(Duration.ofSeconds(5)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
