package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.RedisCluster;
import dev.sluice.testkit.RedisNode;
import dev.sluice.testkit.RedisSentinels;
import java.time.Duration;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * {@code budget.redis.failover.policy} on real failovers, at the budget itself (no outage mode in between): after a
 * kill -9 of the primary serving a bot, the first decision that notices the new primary drains the bot there, so it
 * is refused for about a second (drained-restart); with {@code none} the same bot is granted at once. On a cluster
 * the change is seen per slot (a bot on another primary is not drained); through Sentinel by the new run_id.
 */
class RedisFailoverPolicyIT {
    private static final Duration TIMEOUT = Duration.ofMillis(500);
    /** 100/s, burst 1: a grant's TAT is 10 ms ahead, so a granted call is never refused a second later by itself. */
    private static final BudgetLimits LIMITS = new BudgetLimits(100, 1, 1000, 10);

    private static BudgetConfig config(BudgetConfig.FailoverPolicy policy) {
        return BudgetConfig.builder(LIMITS).failoverPolicy(policy).build();
    }

    @Test
    void onAClusterTheBotsOfTheKilledPrimaryStartDrainedOnThePromotedReplica() {
        try (RedisCluster cluster = RedisCluster.start(3, 1)) {
            String url = "redis-cluster://" + cluster.seeds();
            RedisNode owner = cluster.primaryOf(BudgetKeys.botState("alerts")).orElseThrow();
            String sameShard = IntStream.range(0, 500).mapToObj(i -> "b" + i)
                    .filter(b -> cluster.primaryOf(BudgetKeys.botState(b)).orElseThrow() == owner).findFirst().orElseThrow();
            String otherShard = IntStream.range(0, 500).mapToObj(i -> "o" + i)
                    .filter(b -> cluster.primaryOf(BudgetKeys.botState(b)).orElseThrow() != owner).findFirst().orElseThrow();
            try (RedisGcraBudget drained = new RedisGcraBudget(url, config(BudgetConfig.FailoverPolicy.DRAINED_RESTART), TIMEOUT);
                 RedisGcraBudget none = new RedisGcraBudget(url, config(BudgetConfig.FailoverPolicy.NONE), TIMEOUT)) {
                assertThat(drained.tryAcquire(BudgetRequest.live("alerts", "1")).granted()).isTrue();
                assertThat(drained.tryAcquire(BudgetRequest.live(otherShard, "1")).granted()).isTrue();
                assertThat(none.tryAcquire(BudgetRequest.live(sameShard, "1")).granted()).isTrue();

                cluster.kill9(owner);
                cluster.awaitPrimaryOf(BudgetKeys.botState("alerts"), owner, Duration.ofSeconds(30));
                Decision first = firstAnswer(() -> decideUntilDrained(drained, "alerts"));
                assertThat(first.granted()).as("drained on the new primary: %s", first).isFalse();
                assertThat(first.limit()).isEqualTo(Limit.GLOBAL);
                assertThat(first.retryIn()).isGreaterThanOrEqualTo(Duration.ofMillis(900));
                assertThat(drained.failoverDrains()).isEqualTo(1);

                Decision other = drained.tryAcquire(BudgetRequest.live(otherShard, "2"));
                assertThat(other.granted()).as("a bot on a primary that did not change is not drained").isTrue();
                assertThat(drained.failoverDrains()).isEqualTo(1);

                Decision undrained = firstAnswer(() -> none.tryAcquire(BudgetRequest.live(sameShard, "2")));
                assertThat(undrained.granted()).as("policy none decides on what the new primary holds").isTrue();
                assertThat(none.failoverDrains()).isZero();
            }
        }
    }

    @Test
    void throughSentinelANewRunIdDrainsTheBot() {
        try (RedisSentinels set = RedisSentinels.start(1, 3);
             RedisGcraBudget drained = new RedisGcraBudget(set.url(), config(BudgetConfig.FailoverPolicy.DRAINED_RESTART), TIMEOUT)) {
            assertThat(drained.tryAcquire(BudgetRequest.live("alerts", "1")).granted()).isTrue();
            RedisNode primary = set.primary().orElseThrow();
            primary.kill9();
            set.awaitFailover(primary, Duration.ofSeconds(30));
            Decision first = firstAnswer(() -> decideUntilDrained(drained, "alerts"));
            assertThat(first.granted()).as("drained on the promoted replica: %s", first).isFalse();
            assertThat(first.retryIn()).isGreaterThanOrEqualTo(Duration.ofMillis(900));
            assertThat(drained.failoverDrains()).isEqualTo(1);
        }
    }

    /**
     * Decides until the decision that drained the bot (Lettuce may route a call to the new primary a moment before it
     * publishes the topology change: those grants are counted and printed, the race this policy leaves open).
     */
    private static Decision decideUntilDrained(RedisGcraBudget budget, String bot) {
        int before = 0;
        while (true) {
            long drains = budget.failoverDrains();
            Decision d = budget.tryAcquire(BudgetRequest.live(bot, "2"));
            if (budget.failoverDrains() > drains) {
                System.out.printf("RedisFailoverPolicyIT: %s drained after %d grant(s) on the new primary before the change "
                        + "was seen; first decision after the drain: %s%n", bot, before, d);
                return d;
            }
            before++;
            if (before > 500) {
                throw new AssertionError("the bot was not drained after " + before + " decisions on the new primary");
            }
            sleep(10);
        }
    }

    /** Repeats {@code call} while Redis cannot decide (bounded: 30 s), as a caller in outage mode would. */
    private static Decision firstAnswer(Supplier<Decision> call) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        BudgetUnavailableException last = null;
        while (System.nanoTime() < deadline) {
            try {
                return call.get();
            } catch (BudgetUnavailableException e) {
                last = e;
            }
            sleep(50);
        }
        throw new AssertionError("no decision within 30 s", last);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms); // bounded retry while the client reconnects, not a wait for a result
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
