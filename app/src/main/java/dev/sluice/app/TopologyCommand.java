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
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** Runs the Kafka Streams topology against an external Kafka and schema registry. */
@Command(name = "topology", mixinStandardHelpOptions = true,
        description = {"Run the Sluice Kafka Streams topology (validate, key by chat, classify, fold, schedule).",
                "Needs bootstrap.servers and schema.registry.url (file, -D, or SLUICE_BOOTSTRAP_SERVERS / SLUICE_SCHEMA_REGISTRY_URL).",
                "Serves /metrics, /health/live and /health/ready on ops.port (default 9464)."})
public final class TopologyCommand implements Callable<Integer> {
    @Mixin
    ConfigOptions config;

    @Override
    public Integer call() throws Exception {
        Settings settings = config.load();
        TopologyConfig cfg = TopologyConfig.from(settings);
        try (ProcessOps ops = ProcessOps.create("topology", settings, OpsConfig.TOPOLOGY_DEFAULT_PORT)) {
            TopologyService service = start(cfg, ops);
            System.out.println("sluice topology: running (application.id=" + cfg.applicationId() + ", ops port "
                    + ops.port() + "); Ctrl-C to stop");
            Shutdown.awaitThenClose(service, "topology");
        }
        return 0;
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
