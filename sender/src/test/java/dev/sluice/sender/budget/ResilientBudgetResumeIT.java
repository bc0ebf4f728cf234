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
    /**
     * Two replicas, one deciding at the full shared rate, the other with nothing decided yet (no partitions until a
     * rebalance, as RedisStallIT's senders 2 and 3 in a failing full verify): Redis stops. The idle replica's first
     * fallback decision is drained like the busy one's, as the provider still counts the busy one's grants.
     */
    @Test
    void a_replica_with_no_shared_decision_of_its_own_starts_drained_when_redis_goes() {
        BudgetConfig config = BudgetConfig.builder(new BudgetLimits(30, 1, 1000, 1000)).maxReplicas(2)
                .probeInterval(Duration.ofSeconds(5)).circuitMinimumCalls(1).build();
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             ResilientBudget busy = ResilientBudget.connect(redis.url(), config, Duration.ofMillis(200),
                     BudgetListener.NONE, Clock.systemUTC());
             ResilientBudget idle = ResilientBudget.connect(redis.url(), config, Duration.ofMillis(200),
                     BudgetListener.NONE, Clock.systemUTC())) {
            assertThat(busy.tryAcquire(BOT, "1").granted()).isTrue();
            redis.stop();
            Decision first = idle.tryAcquire(BOT, "2");
            assertThat(idle.state()).isEqualTo(BudgetState.FALLBACK_LOCAL);
            assertThat(first.granted()).as("the idle replica's first fallback decision: drained, not granted").isFalse();
            assertThat(first.limit()).isEqualTo(Limit.GLOBAL);
            assertThat(first.retryIn()).isGreaterThan(Duration.ofMillis(900));
            Decision busyFirst = busy.tryAcquire(BOT, "3");
            assertThat(busy.state()).isEqualTo(BudgetState.FALLBACK_LOCAL);
            assertThat(busyFirst.granted()).as("the busy replica's: drained too").isFalse();
        }
    }
}
