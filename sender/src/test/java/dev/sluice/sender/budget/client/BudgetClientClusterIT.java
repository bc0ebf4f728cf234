package dev.sluice.sender.budget.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.config.Settings;
import dev.sluice.metrics.BudgetState;
import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetInspector;
import dev.sluice.sender.budget.BudgetKeys;
import dev.sluice.sender.budget.Limit;
import dev.sluice.sender.budget.RedisGcraBudget;
import dev.sluice.testkit.RedisCluster;
import dev.sluice.testkit.RedisNode;
import java.time.Duration;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * {@link BudgetClient} and {@link BudgetInspector} ({@code sluice budget status}) on a real 3-primary Redis Cluster
 * through a {@code redis-cluster://} URL: two keys whose slots live on different primaries are each decided on their
 * own primary (shared state, no outage mode), a sender's budget in the same cluster sees the client's grants, and the
 * inspector reads them there.
 */
class BudgetClientClusterIT {

    @Test
    void theClientDecidesEachKeyOnItsPrimaryAndSharesItWithTheSenders() {
        try (RedisCluster cluster = RedisCluster.start(3, 0)) {
            String url = "redis-cluster://" + cluster.primaries().get(0).address();
            RedisNode alertsPrimary = cluster.primaryOf(BudgetKeys.botState("alerts")).orElseThrow();
            String other = IntStream.range(0, 500).mapToObj(i -> "k" + i)
                    .filter(k -> cluster.primaryOf(BudgetKeys.botState(k)).orElseThrow() != alertsPrimary)
                    .findFirst().orElseThrow();
            Settings s = Settings.of(Map.of("redis.url", url, "budget.global.rate.per.s", "1", "budget.global.burst", "1",
                    "redis.command.timeout.ms", "2000"));
            BudgetConfig config = BudgetConfig.from(s);
            try (BudgetClient client = BudgetClient.fromSettings(s);
                 RedisGcraBudget sender = new RedisGcraBudget(url, config, Duration.ofSeconds(2));
                 BudgetInspector inspector = new BudgetInspector(url, config, Duration.ofSeconds(2))) {
                for (String key : new String[] {"alerts", other}) {
                    assertThat(client.tryAcquire(key).granted()).as(key).isTrue();
                    assertThat(client.tryAcquire(key).limit()).as(key + ": 1/s, burst 1").isEqualTo(Limit.GLOBAL);
                    assertThat(sender.tryAcquire(key, "7").limit()).as(key + ": the sender sees the client's grant")
                            .isEqualTo(Limit.GLOBAL);
                    BudgetInspector.Status status = inspector.status(key, null);
                    assertThat(status.global().tatEpochMicros()).as(key).isNotNull();
                    assertThat(status.global().remainingBurst()).as(key).isZero();
                }
                assertThat(client.state()).isEqualTo(BudgetState.SHARED);
            }
        }
    }
}
