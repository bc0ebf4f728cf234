package dev.sluice.app.ops;

import dev.sluice.app.deploy.DeployConfigConsistencyTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.metrics.TopologyMetrics;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.topology.TopicBootstrap;
import dev.sluice.topology.TopologyConfig;
import dev.sluice.topology.TopologyService;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The topology's ops endpoints against a real (embedded KRaft) broker: not ready before Kafka Streams
 * runs, ready once it is RUNNING, /metrics carries Sluice, Kafka Streams and JVM meters, and not live
 * once the streams have stopped.
 */
class TopologyOpsIT {
    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void readinessFollowsKafkaStreamsAndMetricsAreScraped(@TempDir Path stateDir) throws Exception {
        AvroTrust.ensure();
        try (EmbeddedKafka kafka = EmbeddedKafka.start(); InProcessSchemaRegistry registry = InProcessSchemaRegistry.start()) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
                TopicBootstrap.ensureTopics(admin, Topics.defaults(), 2, (short) 1);
            }
            Settings settings = Settings.of(Map.of(
                    "bootstrap.servers", kafka.bootstrapServers(),
                    "schema.registry.url", registry.url(),
                    "application.id", "ops-it",
                    "state.dir", stateDir.toString(),
                    "ops.port", "0",
                    "ops.bind.address", "127.0.0.1"));
            try (ProcessOps ops = ProcessOps.create("topology", settings, OpsConfig.TOPOLOGY_DEFAULT_PORT)) {
                TopologyMetrics.bind(ops.registry());
                TopologyService service = new TopologyService(TopologyConfig.from(settings));
                ops.bindKafkaStreams(service.streams())
                        .serve(HealthCheck.streamsAlive(service::state), HealthCheck.streamsRunning(service::state));
                assertThat(get(ops, "/health/ready").statusCode()).isEqualTo(503); // CREATED

                service.start();
                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                        .until(() -> get(ops, "/health/ready").statusCode() == 200);
                assertThat(get(ops, "/health/ready").body()).contains("\"streams\":\"RUNNING\"");

                String scrape = get(ops, "/metrics").body();
                assertThat(MetricsCheck.missing(scrape, "sluice.topology.")).isEmpty();
                assertThat(scrape).contains("kafka_stream_", "jvm_memory_used_bytes", "process=\"topology\"");
                // The Kafka metrics the alert rules query exist under these names (deploy/prometheus/alerts.yml).
                DeployConfigConsistencyTest.KAFKA_METRICS_IN_ALERTS.get("topology")
                        .forEach(name -> assertThat(scrape).as("alerted metric").contains("\n" + name + "{"));

                service.close();
                HttpResponse<String> live = get(ops, "/health/live");
                assertThat(live.statusCode()).isEqualTo(503);
                assertThat(live.body()).contains("NOT_RUNNING");
            }
        }
    }

    private HttpResponse<String> get(ProcessOps ops, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ops.port() + path)).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
