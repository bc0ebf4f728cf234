package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.testkit.RedisCluster;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import dev.sluice.testkit.RedisNode;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@code budget.redis.eviction.check} against real redis-servers: a Redis left at noeviction is accepted; one set to
 * allkeys-lru (or volatile-lru: every Sluice key has a TTL) is refused with the node and the policy named, or only
 * warned about; on a cluster every primary is read, so one evicting primary among three is found. A user whose ACL
 * denies INFO still decides (nothing checked, a warning).
 */
class RedisEvictionCheckIT {
    private static final Duration TIMEOUT = Duration.ofSeconds(2);

    private static BudgetConfig config(BudgetConfig.EvictionCheck check) {
        return BudgetConfig.builder(BudgetLimits.telegramDefaults()).evictionCheck(check).build();
    }

    @Test
    void anEvictingServerIsRefusedOrWarnedAbout() throws Exception {
        try (RedisInstance redis = RedisLauncher.localProcess().launch()) {
            try (RedisGcraBudget ok = new RedisGcraBudget(redis.url(), config(BudgetConfig.EvictionCheck.REFUSE), TIMEOUT)) {
                assertThat(ok.tryAcquire(BudgetRequest.live("alerts", "1")).granted()).isTrue();
            }
            setPolicy(redis.url(), "volatile-lru");
            assertThatThrownBy(() -> new RedisGcraBudget(redis.url(), config(BudgetConfig.EvictionCheck.REFUSE), TIMEOUT))
                    .isInstanceOf(BudgetUnavailableException.class)
                    .hasMessageContaining("maxmemory-policy=volatile-lru").hasMessageContaining("noeviction");
            try (RedisGcraBudget warned = new RedisGcraBudget(redis.url(), config(BudgetConfig.EvictionCheck.WARN), TIMEOUT)) {
                // another bot: "alerts" took its one-message burst (30/s) just above, a few ms ago
                assertThat(warned.tryAcquire(BudgetRequest.live("warned", "2")).granted()).isTrue();
            }
        }
    }

    @Test
    void anAclWithoutInfoStillDecides() throws Exception {
        try (RedisInstance redis = RedisLauncher.localProcess().launch()) {
            io.lettuce.core.RedisClient admin = io.lettuce.core.RedisClient.create(redis.url());
            try (var c = admin.connect()) {
                c.sync().aclSetuser("sluice", io.lettuce.core.AclSetuserArgs.Builder.on().addPassword("pw-123456")
                        .allKeys().allCommands().removeCommand(io.lettuce.core.protocol.CommandType.INFO));
            } finally {
                admin.shutdown();
            }
            String url = "redis://sluice:pw-123456@" + redis.host() + ":" + redis.port();
            try (RedisGcraBudget b = new RedisGcraBudget(url, config(BudgetConfig.EvictionCheck.REFUSE), TIMEOUT)) {
                assertThat(b.tryAcquire(BudgetRequest.live("alerts", "1")).granted()).isTrue();
                // and the next one is decided too: refused by the bot's global GCRA (30/s, burst 1), not by an error
                assertThat(b.tryAcquire(BudgetRequest.live("alerts", "2")).limit()).isEqualTo(Limit.GLOBAL);
            }
        }
    }

    @Test
    void onAClusterEveryPrimaryIsRead() throws Exception {
        try (RedisCluster cluster = RedisCluster.start(3, 0)) {
            RedisNode evicting = cluster.primaries().get(2);
            evicting.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lru");
            assertThatThrownBy(() -> new RedisGcraBudget("redis-cluster://" + cluster.primaries().get(0).address(),
                    config(BudgetConfig.EvictionCheck.REFUSE), TIMEOUT))
                    .isInstanceOf(BudgetUnavailableException.class)
                    .hasMessageContaining(":" + evicting.port()).hasMessageContaining("allkeys-lru");
        }
    }

    private static void setPolicy(String url, String policy) {
        io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(url);
        try (var c = client.connect()) {
            c.sync().configSet("maxmemory-policy", policy);
        } finally {
            client.shutdown();
        }
    }
}
