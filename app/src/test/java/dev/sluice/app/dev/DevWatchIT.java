package dev.sluice.app.dev;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.metrics.BudgetState;
import dev.sluice.metrics.SenderMetrics;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * {@link DevWatch} on a real redis-server and the senders' own meters: nothing is said while all is well; a redis-server
 * that exits is said once, with what it means; a sender's budget mode change is said with the sender's number, both
 * modes and what the new one means, and again when it comes back.
 */
class DevWatchIT {
    @Test
    void aRedisThatExitsAndModeChangesAreSaidOnce() throws Exception {
        List<String> said = new CopyOnWriteArrayList<>();
        SimpleMeterRegistry one = new SimpleMeterRegistry();
        SimpleMeterRegistry two = new SimpleMeterRegistry();
        SenderMetrics first = SenderMetrics.bind(one, Set.of("alerts"), BudgetState.SHARED);
        SenderMetrics.bind(two, Set.of("alerts"), BudgetState.SHARED);
        try (RedisInstance redis = RedisLauncher.localProcess().launch()) {
            DevWatch watch = new DevWatch(redis, List.of(one, two), said::add);
            watch.check();
            watch.check();
            assertThat(said).isEmpty();

            redis.stop();
            first.budgetState(BudgetState.FALLBACK_LOCAL);
            watch.check();
            watch.check();
            assertThat(said).hasSize(2);
            assertThat(said.get(0)).startsWith("redis-server (port " + redis.port() + ") exited: ")
                    .contains("budget.redis.outage.mode");
            assertThat(said.get(1)).isEqualTo("sender 1: budget mode shared -> fallback_local (Redis unreachable: it "
                    + "decides alone at its share of the rate)");

            first.budgetState(BudgetState.SHARED);
            watch.check();
            assertThat(said).hasSize(3);
            assertThat(said.get(2)).isEqualTo("sender 1: budget mode fallback_local -> shared (the shared budget in "
                    + "Redis again)");
        }
    }
}
