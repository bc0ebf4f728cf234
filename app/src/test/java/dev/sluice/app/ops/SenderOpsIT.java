package dev.sluice.app.ops;

import dev.sluice.app.deploy.DeployConfigConsistencyTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.app.SenderCommand;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.sender.SenderConfig;
import dev.sluice.sender.SenderService;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import dev.sluice.topology.TopicBootstrap;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;

/**
 * {@code sluice sender}'s ops endpoints (what {@link SenderCommand#start} wires) against a real broker and a
 * real redis-server: ready once the loops run with the shared budget, /metrics carries the sender's and the
 * budget's meters under {@code process="sender"}, and neither live nor ready once the service has stopped.
 */
class SenderOpsIT {
    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void readinessFollowsTheLoopsAndTheBudgetModeAndMetricsAreScraped() throws Exception {
        AvroTrust.ensure();
        try (EmbeddedKafka kafka = EmbeddedKafka.start(); InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();
             RedisInstance redis = RedisLauncher.start(); FakeTelegram telegram = FakeTelegram.start()) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
                TopicBootstrap.ensureTopics(admin, Topics.defaults(), 2, (short) 1);
            }
            Settings settings = Settings.of(Map.of(
                    "bootstrap.servers", kafka.bootstrapServers(),
                    "schema.registry.url", registry.url(),
                    "redis.url", redis.url(),
                    "telegram.api.url", telegram.apiUrl(),
                    "bot.alerts.token", "42:ops-test-token",
                    "ops.port", "0",
                    "ops.bind.address", "127.0.0.1"));
            try (ProcessOps ops = ProcessOps.create("sender", settings, OpsConfig.SENDER_DEFAULT_PORT)) {
                SenderService service = SenderCommand.start(SenderConfig.from(settings), ops);
                try {
                    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                            .until(() -> get(ops, "/health/ready").statusCode() == 200);
                    HttpResponse<String> ready = get(ops, "/health/ready");
                    assertThat(ready.body()).contains("\"consumer\":\"running\"", "\"budget_mode\":\"shared\"");
                    assertThat(get(ops, "/health/live").statusCode()).isEqualTo(200);

                    String scrape = get(ops, "/metrics").body();
                    assertThat(scrape).contains("sluice_budget_mode", "sluice_sender_buffered_records",
                            "process=\"sender\"", "jvm_memory_used_bytes");
                    // The Kafka metrics the alert rules query exist under these names (deploy/prometheus/alerts.yml).
                    DeployConfigConsistencyTest.KAFKA_METRICS_IN_ALERTS.get("sender")
                            .forEach(name -> assertThat(scrape).as("alerted metric").contains("\n" + name + "{"));
                } finally {
                    service.close();
                }
                assertThat(get(ops, "/health/live").statusCode()).isEqualTo(503);
                HttpResponse<String> notReady = get(ops, "/health/ready");
                assertThat(notReady.statusCode()).isEqualTo(503);
                assertThat(notReady.body()).contains("\"consumer\":\"stopped\"");
            }
        }
    }

    private HttpResponse<String> get(ProcessOps ops, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ops.port() + path))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
