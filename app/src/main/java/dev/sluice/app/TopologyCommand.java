package dev.sluice.app;

import dev.sluice.topology.TopologyConfig;
import dev.sluice.topology.TopologyService;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** Runs the Kafka Streams topology against an external Kafka and schema registry. */
@Command(name = "topology", mixinStandardHelpOptions = true,
        description = {"Run the Sluice Kafka Streams topology (validate, key by chat, classify, fold, schedule).",
                "Needs bootstrap.servers and schema.registry.url (file, -D, or SLUICE_BOOTSTRAP_SERVERS / SLUICE_SCHEMA_REGISTRY_URL)."})
public final class TopologyCommand implements Callable<Integer> {
    @Mixin
    ConfigOptions config;

    @Override
    public Integer call() throws Exception {
        TopologyConfig cfg = TopologyConfig.from(config.load());
        TopologyService service = new TopologyService(cfg);
        service.start();
        System.out.println("sluice topology: running (application.id=" + cfg.applicationId() + "); Ctrl-C to stop");
        Shutdown.awaitThenClose(service, "topology");
        return 0;
    }
}
