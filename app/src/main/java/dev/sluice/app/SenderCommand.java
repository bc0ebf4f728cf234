package dev.sluice.app;

import dev.sluice.sender.SenderConfig;
import dev.sluice.sender.SenderService;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** Runs one sender instance against an external Kafka, schema registry and Redis. */
@Command(name = "sender", mixinStandardHelpOptions = true,
        description = {"Run one sender instance: consume the outboxes, take budget from Redis, call the provider, write results.",
                "Bot tokens: bot.<bot-id>.token (or SLUICE_BOT_<BOT_ID>_TOKEN); they are never logged."})
public final class SenderCommand implements Callable<Integer> {
    @Mixin
    ConfigOptions config;

    @Override
    public Integer call() throws Exception {
        SenderConfig cfg = SenderConfig.from(config.load());
        SenderService service = new SenderService(cfg, new SimpleMeterRegistry());
        service.start();
        System.out.println("sluice sender: running; Ctrl-C to stop");
        Shutdown.awaitThenClose(service, "sender");
        return 0;
    }
}
