package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.metrics.BudgetState;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Resuming shared mode after redis-server restarted empty: a penalty one replica recorded while Redis was down
 * reaches the other replicas, and the restarted Redis does not hand out a fresh full burst.
 */
class ResilientBudgetResumeIT {
    private static final String BOT = "resume";

    @Test
    void penalties_of_the_outage_are_replayed_and_an_empty_redis_gives_no_fresh_burst() {
        // 1/s, burst 5: a fresh bucket would admit 5 at once
        BudgetConfig config = BudgetConfig.builder(new BudgetLimits(1, 5, 1000, 1000))
                .probeInterval(Duration.ofMillis(200)).circuitMinimumCalls(1).build();
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             ResilientBudget a = ResilientBudget.connect(redis.url(), config, Duration.ofMillis(200), BudgetListener.NONE,
                     Clock.systemUTC());
             ResilientBudget b = ResilientBudget.connect(redis.url(), config, Duration.ofMillis(200), BudgetListener.NONE,
                     Clock.systemUTC())) {
            assertThat(a.tryAcquire(BOT, "1").granted()).isTrue();
            assertThat(b.tryAcquire(BOT, "2").granted()).isTrue();

            redis.stop();
            await().atMost(Duration.ofSeconds(5)).until(() -> {
                a.tryAcquire(BOT, "3");
                return a.state() == BudgetState.FALLBACK_LOCAL;
            });
            a.penalize(BOT, PenaltyScope.CHAT, "7", Duration.ofSeconds(30));

            redis.restart();
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                a.tryAcquire(BOT, "4");
                return a.state() == BudgetState.SHARED;
            });
            // b did not see the penalty: it learns it from Redis, where a replayed it on resuming
            await().atMost(Duration.ofSeconds(10)).until(() -> b.tryAcquire(BOT, "7").limit() == Limit.GATE_CHAT
                    && b.state() == BudgetState.SHARED);
            assertThat(b.tryAcquire(BOT, "7").retryIn()).isGreaterThan(Duration.ofSeconds(20));

            int granted = 0;
            for (int i = 0; i < 5; i++) {
                if (b.tryAcquire(BOT, "fresh-" + i).granted()) {
                    granted++;
                }
            }
            assertThat(granted).as("the bot started drained in the empty Redis: no burst of 5").isLessThanOrEqualTo(2);
        }
    }
}
