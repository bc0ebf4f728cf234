package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The contract on the shared budget against a real redis-server, plus what only Redis can show. */
class RedisGcraBudgetIT extends BudgetContract {
    private static RedisInstance redis;
    private static RedisClient inspector;
    private static StatefulRedisConnection<String, String> inspection;

    @BeforeAll
    static void startRedis() {
        redis = RedisLauncher.start();
        inspector = RedisClient.create(redis.url());
        inspection = inspector.connect();
    }

    @AfterAll
    static void stopRedis() {
        if (inspection != null) {
            inspection.close();
            inspector.shutdown();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    protected BudgetPort budget(BudgetConfig config) {
        return new RedisGcraBudget(redis.url(), config, Duration.ofSeconds(2));
    }

    @Test
    void every_key_written_has_a_px_ttl_of_at_least_its_time_to_refill_and_the_bot_hash_tag() {
        RedisCommands<String, String> r = inspection.sync();
        try (BudgetPort b = budget(new BudgetLimits(2, 1, 0.5, 2))) {
            assertThat(b.tryAcquire(bot, "7").granted()).isTrue();
            assertThat(b.tryAcquire(bot, "7").limit()).isEqualTo(Limit.GLOBAL);
            b.penalizeChat(bot, "8", Duration.ofSeconds(30));
            List<String> keys = r.keys("sluice:*" + bot + "*");
            assertThat(keys).containsExactlyInAnyOrder(
                    "sluice:{" + bot + "}:tat:global", "sluice:{" + bot + "}:tat:chat:7", "sluice:{" + bot + "}:gate:chat:8");
            for (String k : keys) {
                assertThat(k).startsWith("sluice:{" + bot + "}:");
            }
            // global: one message at 2/s -> refills in 500 ms; chat: one of burst 2 at 0.5/s -> 2000 ms
            assertThat(r.pttl("sluice:{" + bot + "}:tat:global")).isBetween(400L, 500L);
            assertThat(r.pttl("sluice:{" + bot + "}:tat:chat:7")).isBetween(1900L, 2000L);
            assertThat(r.pttl("sluice:{" + bot + "}:gate:chat:8")).isBetween(29_000L, 30_001L);
        }
    }

    @Test
    void a_flushed_script_is_loaded_again_and_the_decision_still_works() {
        try (BudgetPort b = budget(new BudgetLimits(1000, 10, 1000, 10))) {
            assertThat(b.tryAcquire(bot, "1").granted()).isTrue();
            inspection.sync().scriptFlush();
            assertThat(b.tryAcquire(bot, "1").granted()).isTrue();
        }
    }

    @Test
    void redis_down_is_reported_as_budget_unavailable() {
        RedisInstance own = RedisLauncher.localProcess().launch();
        BudgetPort b = new RedisGcraBudget(own.url(), new BudgetLimits(10, 1, 1, 1), Duration.ofMillis(300));
        try {
            own.stop();
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> b.tryAcquire(bot, "1"))
                    .isInstanceOf(BudgetUnavailableException.class);
        } finally {
            b.close();
            own.close();
        }
    }
}
