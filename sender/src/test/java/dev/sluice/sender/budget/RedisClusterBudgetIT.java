package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.RedisCluster;
import dev.sluice.testkit.RedisNode;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The budget contract on a real Redis Cluster (3 primaries, 1 replica each), the third backend beside the
 * in-process and the standalone Redis budget, plus what only a cluster can show: a bot's keys live on the
 * primary of its slot, bots on different primaries, a script missing on a node after a failover.
 */
class RedisClusterBudgetIT extends BudgetContract {
    private static RedisCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = RedisCluster.start(3, 1);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static String url() {
        return "redis-cluster://" + cluster.seeds();
    }

    @Override
    protected BudgetPort budget(BudgetConfig config) {
        return new RedisGcraBudget(url(), config, Duration.ofSeconds(2));
    }

    @Test
    void each_bot_decides_on_the_primary_of_its_slot_and_bots_spread_over_primaries() throws Exception {
        Set<Integer> primaries = new HashSet<>();
        try (BudgetPort b = budget(new BudgetLimits(1, 1, 1, 1))) {
            for (String other : List.of("alerts", "quakes", "billing", "news", "ops", "chat")) {
                String botId = bot + "-" + other;
                assertThat(b.tryAcquire(botId, "7").granted()).isTrue();
                assertThat(b.tryAcquire(botId, "8").limit()).as("the bot's global GCRA at 1/s, burst 1").isEqualTo(Limit.GLOBAL);
                RedisNode owner = cluster.primaryOf(BudgetKeys.botState(botId)).orElseThrow();
                assertThat(owner.call("EXISTS", BudgetKeys.botState(botId))).isEqualTo(1L);
                assertThat(owner.call("EXISTS", BudgetKeys.chat(botId, "7"))).isEqualTo(1L);
                primaries.add(owner.port());
            }
        }
        assertThat(primaries).as("six bots' slots on at least two primaries").hasSizeGreaterThanOrEqualTo(2);
    }

    /**
     * The idle probe ({@link BudgetPort#probe}) asks every primary: a cluster with one shard down is not Redis back for
     * the bots of that shard. Its own cluster without replicas (nothing fails over), so the shared one stays whole.
     */
    @Test
    void the_probe_pings_every_primary_so_one_shard_down_fails_it() throws Exception {
        try (RedisCluster own = RedisCluster.start(3, 0);
             BudgetPort b = new RedisGcraBudget("redis-cluster://" + own.seeds(), BudgetConfig.builder(new BudgetLimits(30, 1, 1, 1))
                     .build(), Duration.ofMillis(500))) {
            b.probe();
            own.kill9(own.primaries().get(2));
            org.assertj.core.api.Assertions.assertThatThrownBy(b::probe).isInstanceOf(BudgetUnavailableException.class);
        }
    }

    @Test
    void a_node_without_the_script_runs_it_by_eval_and_keeps_deciding() throws Exception {
        try (BudgetPort b = budget(new BudgetLimits(1000, 10, 1000, 10))) {
            assertThat(b.tryAcquire(bot, "1").granted()).isTrue();
            cluster.primaryOf(BudgetKeys.botState(bot)).orElseThrow().call("SCRIPT", "FLUSH");
            assertThat(b.tryAcquire(bot, "1").granted()).isTrue();
            assertThat(b.tryAcquire(bot, "2").granted()).isTrue();
        }
    }
}
