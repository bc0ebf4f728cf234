package dev.sluice.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.config.Settings;
import dev.sluice.metrics.BudgetState;
import dev.sluice.sender.SenderConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which budget modes besides SHARED keep a sender ready, per configuration. */
class SenderCommandTest {
    private static final Map<String, String> BASE = Map.of(
            "bootstrap.servers", "localhost:9092", "schema.registry.url", "http://localhost:8081",
            "bot.alerts.token", "42:not-a-real-token");

    @Test
    void redisBudgetWithLocalFallbackStaysReadyInFallbackButNotWhenPaused() {
        SenderConfig cfg = SenderConfig.from(Settings.of(BASE).with("redis.url", "redis://localhost:6379").with("budget.redis.outage.mode", "local-fallback"));
        assertThat(SenderCommand.acceptedFallbacks(cfg)).containsExactly(BudgetState.FALLBACK_LOCAL);
    }

    @Test
    void failClosedIsReadyOnlyWhenShared() {
        SenderConfig cfg = SenderConfig.from(Settings.of(BASE).with("redis.url", "redis://localhost:6379").with("budget.redis.outage.mode", "fail-closed"));
        assertThat(SenderCommand.acceptedFallbacks(cfg)).isEmpty();
    }

    @Test
    void localBudgetModeIsReadyInLocal() {
        SenderConfig cfg = SenderConfig.from(Settings.of(BASE).with("budget.mode", "local"));
        assertThat(SenderCommand.acceptedFallbacks(cfg)).containsExactly(BudgetState.LOCAL);
    }
}
