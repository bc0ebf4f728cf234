package dev.sluice.app.ops;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.config.Settings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProcessOpsTest {

    @Test
    void servesOnTheConfiguredPortWithTheProcessTag() throws Exception {
        Settings s = Settings.of(Map.of("ops.port", "0", "ops.bind.address", "127.0.0.1"));
        try (ProcessOps ops = ProcessOps.create("topology", s, OpsConfig.TOPOLOGY_DEFAULT_PORT)
                .serve(HealthCheck.alwaysUp(), HealthCheck.alwaysUp())) {
            assertThat(ops.port()).isPositive();
            HttpResponse<String> r = HttpClient.newHttpClient().send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ops.port() + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).contains("process=\"topology\"");
        }
    }

    @Test
    void kafkaStreamsMetricsAreBoundBeforeStart(@org.junit.jupiter.api.io.TempDir java.nio.file.Path stateDir) {
        org.apache.kafka.streams.StreamsBuilder b = new org.apache.kafka.streams.StreamsBuilder();
        b.stream("in").to("out");
        java.util.Properties p = new java.util.Properties();
        p.put("application.id", "ops-test");
        p.put("bootstrap.servers", "127.0.0.1:1"); // never contacted: the streams instance is not started
        p.put("state.dir", stateDir.toString());
        try (ProcessOps ops = ProcessOps.create("topology", Settings.of(Map.of("ops.enabled", "false")), OpsConfig.TOPOLOGY_DEFAULT_PORT);
             org.apache.kafka.streams.KafkaStreams streams = new org.apache.kafka.streams.KafkaStreams(b.build(), p)) {
            ops.bindKafkaStreams(streams);
            assertThat(ops.registry().scrape()).contains("kafka_stream_");
        }
    }

    @Test
    void disabledServesNothingButKeepsTheRegistry() {
        try (ProcessOps ops = ProcessOps.create("sender", Settings.of(Map.of("ops.enabled", "false")), OpsConfig.SENDER_DEFAULT_PORT)
                .serve(HealthCheck.alwaysUp(), HealthCheck.alwaysUp())) {
            assertThat(ops.port()).isEqualTo(-1);
            assertThat(ops.registry().scrape()).contains("jvm_memory_used_bytes");
        }
    }
}
