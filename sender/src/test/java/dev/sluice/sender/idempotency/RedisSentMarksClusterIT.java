package dev.sluice.sender.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.sender.budget.BudgetKeys;
import dev.sluice.testkit.RedisCluster;
import dev.sluice.testkit.RedisNode;
import dev.sluice.testkit.RedisSentinels;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@link RedisSentMarks} on a real 3-primary Redis Cluster and a real Sentinel set: each mark lands on the primary of
 * its bot's slot (read back from that node itself), the asynchronous DONE write is routed the same way, and after a
 * kill -9 of a primary the same instance reads and writes on the promoted replica. Also measures what a mark costs
 * in memory ({@code MEMORY USAGE} of real keys as the sender writes them), printed for docs/operations.md.
 */
class RedisSentMarksClusterIT {
    private static final List<String> BOTS = List.of("alerts", "quakes", "billing", "news", "ops", "chat");

    @Test
    void marksLiveOnTheirBotsPrimaryAndSurviveAFailover() throws Exception {
        try (RedisCluster cluster = RedisCluster.start(3, 1);
             RedisSentMarks marks = new RedisSentMarks("redis-cluster://" + cluster.nodes().get(0).address(),
                     Duration.ofHours(1), Duration.ofSeconds(2))) {
            Set<Integer> primaries = new HashSet<>();
            for (String bot : BOTS) {
                marks.markSent(bot, "m-1", "DELIVERED", 7L, 1_700_000_000_000L, "4711");
                String key = BudgetKeys.sentMark(bot, "m-1");
                RedisNode owner = cluster.primaryOf(key).orElseThrow();
                primaries.add(owner.port());
                assertThat(String.valueOf(owner.call("GET", key))).startsWith("SENT|DELIVERED|7|");
                assertThat(marks.get(bot, "m-1").state()).isEqualTo(SentMarks.State.SENT);
                marks.markResultWritten(bot, "m-1");
                await().atMost(Duration.ofSeconds(5)).until(() -> marks.get(bot, "m-1").state() == SentMarks.State.RESULT_WRITTEN);
            }
            assertThat(primaries).as("the bots' marks live on different primaries").hasSizeGreaterThanOrEqualTo(2);
            printMemoryUsage(cluster.primaryOf(BudgetKeys.sentMark("alerts", "m-1")).orElseThrow(), marks);

            String key = BudgetKeys.sentMark("alerts", "m-2");
            RedisNode owner = cluster.primaryOf(key).orElseThrow();
            cluster.kill9(owner);
            cluster.awaitPrimaryOf(key, owner, Duration.ofSeconds(20));
            // the session finds the promoted replica by itself (commands fail until then: bounded retry)
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                    .untilAsserted(() -> marks.markSent("alerts", "m-2", "DELIVERED", 8L));
            assertThat(marks.get("alerts", "m-2").providerMessageId()).isEqualTo(8L);
        }
    }

    @Test
    void throughSentinelMarksFollowThePromotedReplica() {
        try (RedisSentinels set = RedisSentinels.start(1, 3);
             RedisSentMarks marks = new RedisSentMarks(set.url(), Duration.ofHours(1), Duration.ofSeconds(2))) {
            marks.markSent("alerts", "m-1", "DELIVERED", 7L);
            RedisNode primary = set.primary().orElseThrow();
            primary.kill9();
            set.awaitFailover(primary, Duration.ofSeconds(30));
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                    .untilAsserted(() -> marks.markSent("alerts", "m-2", "DELIVERED", 8L));
            assertThat(marks.get("alerts", "m-2").state()).isEqualTo(SentMarks.State.SENT);
        }
    }

    /** MEMORY USAGE of marks as the sender writes them: a SENT mark (with time and result key) and a DONE mark. */
    private static void printMemoryUsage(RedisNode node, RedisSentMarks marks) throws Exception {
        String uuid = "3f2a6c1e-9b7d-4e11-8a52-0c6f1d2e3b4a"; // message ids are UUIDs or topology digest ids
        marks.markSent("alerts", uuid, "DELIVERED", 123456789L, System.currentTimeMillis(), "-1001234567890");
        long sent = (Long) node.call("MEMORY", "USAGE", BudgetKeys.sentMark("alerts", uuid), "SAMPLES", "0");
        marks.markResultWritten("alerts", uuid);
        await().atMost(Duration.ofSeconds(5)).until(() -> marks.get("alerts", uuid).state() == SentMarks.State.RESULT_WRITTEN);
        long done = (Long) node.call("MEMORY", "USAGE", BudgetKeys.sentMark("alerts", uuid), "SAMPLES", "0");
        System.out.printf("sent mark memory: SENT %d B, DONE %d B (key %d chars)%n", sent, done,
                BudgetKeys.sentMark("alerts", uuid).length());
        assertThat(done).isPositive().isLessThanOrEqualTo(sent);
    }
}
