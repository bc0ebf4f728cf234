package dev.sluice.app;

import dev.sluice.app.ops.HealthCheck;
import dev.sluice.app.ops.OpsConfig;
import dev.sluice.app.ops.ProcessOps;
import dev.sluice.config.Settings;
import dev.sluice.metrics.BudgetState;
import dev.sluice.sender.BudgetMode;
import dev.sluice.sender.SenderConfig;
import dev.sluice.sender.SenderService;
import dev.sluice.sender.budget.BudgetConfig;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** Runs one sender instance against an external Kafka, schema registry and Redis. */
@Command(name = "sender", mixinStandardHelpOptions = true,
        description = {"Run one sender instance: consume the outboxes, take budget from Redis, call the provider, write results.",
                "Bot tokens: bot.<bot-id>.token (or SLUICE_BOT_<BOT_ID>_TOKEN); they are never logged.",
                "Serves /metrics, /health/live and /health/ready on ops.port (default 9465)."})
public final class SenderCommand implements Callable<Integer> {
    @Mixin
    ConfigOptions config;

    @Override
    public Integer call() throws Exception {
        Settings settings = config.load();
        SenderConfig cfg = SenderConfig.from(settings);
        try (ProcessOps ops = ProcessOps.create("sender", settings, OpsConfig.SENDER_DEFAULT_PORT)) {
            SenderService service = start(cfg, ops);
            System.out.println("sluice sender: running (instance " + cfg.instanceId() + ", ops port " + ops.port()
                    + "); Ctrl-C to stop");
            Shutdown.awaitThenClose(service, "sender");
        }
        return 0;
    }

    /**
     * Builds the service on the process registry, serves health, starts it. Liveness: the consumer and
     * dispatch loops run. Readiness: they run, the consumer is connected to a broker, the budget mode is one this
     * configuration accepts and the provider rejects no bot's token.
     */
    public static SenderService start(SenderConfig cfg, ProcessOps ops) {
        SenderService service = new SenderService(cfg, ops.registry());
        ops.serve(HealthCheck.senderAlive(service::isRunning),
                HealthCheck.senderReady(service::isRunning, service::kafkaConnected, service::budgetState, acceptedFallbacks(cfg),
                        service::tokenRejectedBots));
        try {
            service.start(); // budget.limits.check=refuse: a ConfigException when a live sender decides with other limits
        } catch (RuntimeException e) {
            service.close();
            throw e;
        }
        return service;
    }

    /**
     * The budget modes besides SHARED in which an instance counts as ready: LOCAL when configured
     * {@code budget.mode=local}; FALLBACK_LOCAL while Redis is down with {@code budget.redis.outage.mode=local-fallback}
     * (it still sends, at its share of the rate). PAUSED (fail-closed during an outage) is never ready: it
     * is the signal an operator needs.
     */
    static Set<BudgetState> acceptedFallbacks(SenderConfig cfg) {
        if (cfg.budgetMode() == BudgetMode.LOCAL) {
            return Set.of(BudgetState.LOCAL);
        }
        return cfg.budgetConfig().outageMode() == BudgetConfig.OutageMode.LOCAL_FALLBACK
                ? Set.of(BudgetState.FALLBACK_LOCAL) : Set.of();
    }
}
