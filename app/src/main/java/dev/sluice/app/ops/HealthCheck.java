package dev.sluice.app.ops;

import dev.sluice.metrics.BudgetState;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** A health check evaluated on every request; it must be cheap and must not block. */
@FunctionalInterface
public interface HealthCheck {

    Health check();

    /** Always up: the process answers HTTP, so it is alive. */
    static HealthCheck alwaysUp() {
        return () -> Health.up(Map.of());
    }

    /**
     * Topology readiness: up only while Kafka Streams is {@code RUNNING} (not while it is
     * {@code REBALANCING}, {@code CREATED}, {@code PENDING_SHUTDOWN}, {@code ERROR} ...).
     *
     * @param streamsState e.g. {@code () -> kafkaStreams.state()}; null counts as not started
     */
    static HealthCheck streamsRunning(Supplier<? extends Enum<?>> streamsState) {
        return () -> {
            Enum<?> state = streamsState.get();
            String name = state == null ? "NOT_STARTED" : state.name();
            Map<String, String> d = Map.of("streams", name);
            return "RUNNING".equals(name) ? Health.up(d) : Health.down(d);
        };
    }

    /**
     * Topology liveness: down once Kafka Streams has died ({@code ERROR}, {@code PENDING_ERROR}) or was
     * shut down ({@code NOT_RUNNING}) while the process still runs, so an orchestrator restarts it.
     */
    static HealthCheck streamsAlive(Supplier<? extends Enum<?>> streamsState) {
        return () -> {
            Enum<?> state = streamsState.get();
            String name = state == null ? "NOT_STARTED" : state.name();
            Map<String, String> d = Map.of("streams", name);
            boolean dead = name.equals("ERROR") || name.equals("PENDING_ERROR") || name.equals("NOT_RUNNING");
            return dead ? Health.down(d) : Health.up(d);
        };
    }

    /**
     * Sender liveness: down once its consumer or dispatch loop has ended while the process still runs
     * (a failed loop is not restarted in place), so an orchestrator restarts the process.
     */
    static HealthCheck senderAlive(BooleanSupplier loopsRunning) {
        return () -> {
            boolean running = loopsRunning.getAsBoolean();
            Map<String, String> d = Map.of("consumer", running ? "running" : "stopped");
            return running ? Health.up(d) : Health.down(d);
        };
    }

    /**
     * Sender readiness: up only while its Kafka consumer runs and its budget mode is
     * {@link BudgetState#SHARED} or one of the configured allowed fallbacks (e.g.
     * {@link BudgetState#FALLBACK_LOCAL}; {@link BudgetState#LOCAL} when {@code budget.mode=local}).
     */
    static HealthCheck senderReady(BooleanSupplier consumerRunning, Supplier<BudgetState> budgetMode,
                                   Set<BudgetState> allowedFallbacks) {
        return senderReady(consumerRunning, budgetMode, allowedFallbacks, Set::of);
    }

    /**
     * As {@link #senderReady(BooleanSupplier, Supplier, Set)}, and also down while the provider rejects a bot's token
     * (issue 16: 401/404; that bot's lanes are parked): the detail {@code token_rejected} names those bots (ids only,
     * never a token).
     */
    static HealthCheck senderReady(BooleanSupplier consumerRunning, Supplier<BudgetState> budgetMode,
                                   Set<BudgetState> allowedFallbacks, Supplier<Set<String>> tokenRejectedBots) {
        return senderReady(consumerRunning, null, budgetMode, allowedFallbacks, tokenRejectedBots);
    }

    /**
     * As {@link #senderReady(BooleanSupplier, Supplier, Set, Supplier)}, and also down while its Kafka consumer has no
     * connection to any broker (the detail {@code kafka} says {@code connected} or {@code no connection to any broker}):
     * then it can neither consume nor write results, though its loops run. Redis is not checked here: the budget mode
     * says what a Redis outage does (local-fallback keeps sending, so ready; fail-closed is {@code paused}, not ready).
     *
     * @param kafkaConnected null: not checked (no {@code kafka} detail)
     */
    static HealthCheck senderReady(BooleanSupplier consumerRunning, BooleanSupplier kafkaConnected,
                                   Supplier<BudgetState> budgetMode, Set<BudgetState> allowedFallbacks,
                                   Supplier<Set<String>> tokenRejectedBots) {
        return () -> {
            boolean running = consumerRunning.getAsBoolean();
            boolean kafka = kafkaConnected == null || kafkaConnected.getAsBoolean();
            BudgetState mode = budgetMode.get();
            Map<String, String> d = new LinkedHashMap<>();
            d.put("consumer", running ? "running" : "stopped");
            if (kafkaConnected != null) {
                d.put("kafka", kafka ? "connected" : "no connection to any broker");
            }
            d.put("budget_mode", mode == null ? "unknown" : mode.name().toLowerCase());
            Set<String> rejected = tokenRejectedBots.get();
            if (!rejected.isEmpty()) {
                d.put("token_rejected", String.join(",", rejected));
            }
            boolean modeOk = mode == BudgetState.SHARED || (mode != null && allowedFallbacks.contains(mode));
            return running && kafka && modeOk && rejected.isEmpty() ? Health.up(d) : Health.down(d);
        };
    }
}
