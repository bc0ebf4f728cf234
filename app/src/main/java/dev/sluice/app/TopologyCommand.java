package dev.sluice.app;

import dev.sluice.app.ops.HealthCheck;
import dev.sluice.app.ops.OpsConfig;
import dev.sluice.app.ops.ProcessOps;
import dev.sluice.config.Settings;
import dev.sluice.metrics.TopologyMetrics;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.topology.MicrometerTopologyCounters;
import dev.sluice.topology.TopologyConfig;
import dev.sluice.topology.TopologyService;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.AdminClientConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Runs the Kafka Streams topology against an external Kafka and schema registry. Refuses to start (exit code 2, one line
 * naming it) while another Sluice pipeline, under another {@code application.id}, reads the same notifications topics
 * ({@link OtherPipelines}): every notification would be processed and sent twice. {@code --allow-second-pipeline} starts
 * anyway; a check that cannot run (ACLs, timeout) is a warning.
 */
@Command(name = "topology", mixinStandardHelpOptions = true,
        description = {"Run the Sluice Kafka Streams topology (validate, key by chat, classify, fold, schedule).",
                "Needs bootstrap.servers and schema.registry.url (file, -D, or SLUICE_BOOTSTRAP_SERVERS / SLUICE_SCHEMA_REGISTRY_URL).",
                "Serves /metrics, /health/live and /health/ready on ops.port (default 9464)."})
public final class TopologyCommand implements Callable<Integer> {
    /** Each Admin call of the check; a broker that does not answer fails the start soon after anyway. */
    static final Duration CHECK_TIMEOUT = Duration.ofSeconds(10);

    @Mixin
    ConfigOptions config;

    @Option(names = "--allow-second-pipeline", description = "Start even while another application.id reads the same "
            + "notifications topics (each notification is then processed, and sent, by both).")
    boolean allowSecondPipeline;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        Settings settings = config.load();
        TopologyConfig cfg = TopologyConfig.from(settings);
        if (!allowSecondPipeline && otherPipelineRuns(cfg)) {
            return 2;
        }
        try (ProcessOps ops = ProcessOps.create("topology", settings, OpsConfig.TOPOLOGY_DEFAULT_PORT)) {
            TopologyService service = start(cfg, ops);
            System.out.println("sluice topology: running (application.id=" + cfg.applicationId() + ", ops port "
                    + ops.port() + "); Ctrl-C to stop");
            Shutdown.awaitThenClose(service, "topology");
        }
        return 0;
    }

    /** Tells (stderr) whether another application id reads the input topics; true: refuse. */
    private boolean otherPipelineRuns(TopologyConfig cfg) {
        Map<String, Object> admin = new HashMap<>(cfg.kafkaPassThrough());
        admin.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cfg.bootstrapServers());
        admin.keySet().retainAll(AdminClientConfig.configNames());
        List<String> inputs = List.of(cfg.topics().notifications(), cfg.topics().notificationsBackfill());
        java.io.PrintWriter err = spec.commandLine().getErr();
        try {
            List<OtherPipelines.Pipeline> others = OtherPipelines.find(admin, cfg.applicationId(), inputs, CHECK_TIMEOUT);
            if (others.isEmpty()) {
                return false;
            }
            err.println("topology: another Sluice pipeline already reads " + String.join(" and ", inputs) + ": " + others.get(0)
                    + (others.size() > 1 ? " and " + (others.size() - 1) + " more" : "") + ". This one (application.id '"
                    + cfg.applicationId() + "') would process and send every notification again. To add an instance to that"
                    + " pipeline give -D application.id=" + others.get(0).groupId() + "; else stop it first, or pass"
                    + " --allow-second-pipeline");
            err.flush();
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
        } catch (Exception e) {
            err.println("topology: WARN could not check whether another pipeline reads " + String.join(" and ", inputs)
                    + " (" + (e.getCause() != null ? e.getCause() : e).getClass().getSimpleName() + ": "
                    + dev.sluice.app.tools.ToolErrors.safe(String.valueOf((e.getCause() != null ? e.getCause() : e).getMessage()))
                    + "); starting");
            err.flush();
            return false;
        }
    }

    /** Builds the service with Micrometer counters, binds its Kafka Streams metrics, serves health, starts it. */
    public static TopologyService start(TopologyConfig cfg, ProcessOps ops) {
        TopologyService service = new TopologyService(cfg, CachedSchemaRegistryClient.fromSettings(cfg.settings()),
                new MicrometerTopologyCounters(TopologyMetrics.bind(ops.registry())));
        ops.bindKafkaStreams(service.streams())
                .serve(HealthCheck.streamsAlive(service::state), HealthCheck.streamsRunning(service::state));
        service.start();
        return service;
    }
}
