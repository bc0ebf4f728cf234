package dev.sluice.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.topology.TopicBootstrap;
import dev.sluice.topology.TopologyConfig;
import dev.sluice.topology.TopologyService;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code sluice topology} while another pipeline runs on the same broker (real embedded KRaft broker): under another
 * application.id (what {@code sluice topology -c <sluice dev's config file>} did: that file names no application.id, so
 * the default 'sluice-topology' beside dev's 'sluice-dev-topology', and every notification was processed and sent twice)
 * it refuses at once with one line naming the running one and how to join it (exit code 2); the running pipeline under
 * its own id is not "another".
 */
class SecondPipelineIT {
    @TempDir
    Path stateDir;

    @Test
    void aSecondApplicationIdOnTheSameNotificationsIsRefused() throws Exception {
        AvroTrust.ensure();
        try (EmbeddedKafka kafka = EmbeddedKafka.start(); InProcessSchemaRegistry registry = InProcessSchemaRegistry.start()) {
            Map<String, Object> admin = Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
            try (Admin a = Admin.create(admin)) {
                TopicBootstrap.ensureTopics(a, Topics.defaults(), 2, (short) 1);
            }
            Settings first = Settings.of(Map.of("bootstrap.servers", kafka.bootstrapServers(), "schema.registry.url", registry.url(),
                    "application.id", "sluice-dev-topology", "state.dir", stateDir.resolve("first").toString()));
            try (TopologyService running = new TopologyService(TopologyConfig.from(first))) {
                running.start();
                await().atMost(Duration.ofSeconds(90)).until(() -> running.state() == KafkaStreams.State.RUNNING);
                List<String> inputs = List.of("notifications", "notifications.backfill");
                // assignments are visible once the group is stable
                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() ->
                        !OtherPipelines.find(admin, "sluice-topology", inputs, Duration.ofSeconds(10)).isEmpty());
                assertThat(OtherPipelines.find(admin, "sluice-dev-topology", inputs, Duration.ofSeconds(10)))
                        .as("an instance under the running one's own id is a scale-out").isEmpty();

                StringWriter out = new StringWriter();
                StringWriter err = new StringWriter();
                long started = System.nanoTime();
                int exit = new CommandLine(new TopologyCommand()).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                        .execute("-D", "bootstrap.servers=" + kafka.bootstrapServers(), "-D", "schema.registry.url=" + registry.url(),
                                "-D", "state.dir=" + stateDir.resolve("second"), "-D", "ops.port=0");
                assertThat(exit).as(err.toString()).isEqualTo(2);
                assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(30));
                assertThat(err.toString().lines().toList()).hasSize(1);
                assertThat(err.toString()).startsWith("topology: another Sluice pipeline already reads notifications and "
                                + "notifications.backfill: application.id 'sluice-dev-topology' (")
                        .contains("partition(s) of notifications, notifications.backfill)")
                        .contains("This one (application.id 'sluice-topology') would process and send every notification again")
                        .contains("give -D application.id=sluice-dev-topology").contains("--allow-second-pipeline");
                assertThat(running.state()).isEqualTo(KafkaStreams.State.RUNNING);
            }
        }
    }
}
