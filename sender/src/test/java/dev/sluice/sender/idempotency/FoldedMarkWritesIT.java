package dev.sluice.sender.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetKeys;
import dev.sluice.sender.budget.BudgetLimits;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.MarkWrites;
import dev.sluice.sender.budget.RedisGcraBudget;
import dev.sluice.testkit.RedisCluster;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import dev.sluice.testkit.RedisNode;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Issue 19: the DONE marks ride on the budget's calls. On a real redis-server (and a real 3-primary Redis Cluster):
 * a DONE mark costs no round trip of its own when a bot asks for budget (the 'acquire' call writes it, with the
 * sent-mark TTL; on one node any bot's call carries it, on a cluster a call of its slot); marks no budget call carried
 * are written by the flush (one script call per slot on a cluster, see also SharedMarkCallsIT); a flush that fails
 * (Redis down) keeps them for the next one; a full buffer falls back to one SET per mark.
 */
class FoldedMarkWritesIT {
    private static final long TTL_MS = Duration.ofHours(1).toMillis();
    private static final BudgetLimits LIMITS = new BudgetLimits(1000, 100, 1000, 100);

    @Test
    void done_marks_ride_on_the_bots_next_budget_call_and_the_rest_on_one_flush_per_bot() {
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             RedisGcraBudget budget = new RedisGcraBudget(redis.url(), BudgetConfig.of(LIMITS), Duration.ofSeconds(2));
             RedisSentMarks marks = new RedisSentMarks(redis.url(), Duration.ofMillis(TTL_MS), Duration.ofSeconds(2))) {
            MarkWrites writes = new MarkWrites(1000, TTL_MS);
            assertThat(budget.foldMarkWrites(writes)).isTrue();
            marks.foldWritesInto(writes, Duration.ofHours(1)); // no timed flush during the test: flush() by hand

            for (int i = 0; i < 10; i++) {
                marks.markSent("alerts", "m-" + i, "DELIVERED", 100L + i, 1_700_000_000_000L, "42");
                marks.markResultWritten("alerts", "m-" + i);
            }
            marks.markResultWritten("quakes", "q-1"); // a bot that asks for no budget: left to the flush
            assertThat(marks.redisWrites()).as("10 SENT writes, no DONE write of its own").isEqualTo(10);
            assertThat(writes.size()).isEqualTo(11);
            assertThat(marks.get("alerts", "m-0").state()).isEqualTo(SentMarks.State.SENT);

            loadScript(redis); // no NOSCRIPT (EVALSHA + EVAL) in the count below
            long calls = budget.redisRoundTrips();
            assertThat(budget.tryAcquire(BudgetRequest.live("alerts", "42")).granted()).isTrue();
            assertThat(budget.redisRoundTrips() - calls).as("the DONE marks rode on the decision").isEqualTo(1);
            for (int i = 0; i < 10; i++) {
                assertThat(marks.get("alerts", "m-" + i).state()).isEqualTo(SentMarks.State.RESULT_WRITTEN);
            }
            assertThat(pttl(redis, BudgetKeys.sentMark("alerts", "m-3"))).isBetween(TTL_MS - 60_000, TTL_MS);
            // session 11: on one Redis node a call carries every bot's pending marks (was: quakes' left to the flush)
            assertThat(writes.bots()).as("quakes' mark rode on alerts' call: one node").isEmpty();
            assertThat(marks.get("quakes", "q-1").state()).isEqualTo(SentMarks.State.RESULT_WRITTEN);
            assertThat(pttl(redis, BudgetKeys.sentMark("quakes", "q-1"))).isBetween(TTL_MS - 60_000, TTL_MS);

            marks.markResultWritten("quakes", "q-2"); // a mark no budget call carries: the flush writes it
            assertThat(marks.flush()).isEqualTo(1);
            assertThat(marks.redisWrites()).as("one flush call").isEqualTo(11);
            assertThat(marks.get("quakes", "q-2").state()).isEqualTo(SentMarks.State.RESULT_WRITTEN);
            assertThat(pttl(redis, BudgetKeys.sentMark("quakes", "q-2"))).isBetween(TTL_MS - 60_000, TTL_MS);
            assertThat(writes.size()).isZero();
        }
    }

    @Test
    void a_failed_flush_keeps_the_marks_and_a_full_buffer_writes_them_one_by_one() throws Exception {
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             RedisSentMarks marks = new RedisSentMarks(redis.url(), Duration.ofMillis(TTL_MS), Duration.ofMillis(500))) {
            MarkWrites writes = new MarkWrites(2, TTL_MS);
            marks.foldWritesInto(writes, Duration.ofHours(1));
            marks.markResultWritten("alerts", "a");
            marks.markResultWritten("alerts", "b");
            assertThat(marks.redisWrites()).isZero();
            marks.markResultWritten("alerts", "c"); // full: written by its own SET, as without folding
            assertThat(marks.redisWrites()).isEqualTo(1);
            awaitState(marks, "c", SentMarks.State.RESULT_WRITTEN);
            assertThat(writes.size()).isEqualTo(2);

            redis.stop();
            assertThat(marks.flush()).isZero();
            assertThat(writes.size()).as("kept for the next flush").isEqualTo(2);
            redis.restart();
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            int written = 0;
            while (written == 0 && System.nanoTime() < deadline) { // bounded: the connection comes back by itself
                written = marks.flush();
                if (written == 0) {
                    Thread.sleep(100);
                }
            }
            assertThat(written).isEqualTo(2);
            assertThat(marks.get("alerts", "a").state()).isEqualTo(SentMarks.State.RESULT_WRITTEN);
            assertThat(marks.get("alerts", "b").state()).isEqualTo(SentMarks.State.RESULT_WRITTEN);
        }
    }

    @Test
    void on_a_cluster_each_bots_marks_ride_on_its_own_primary() throws Exception {
        List<String> bots = List.of("alerts", "quakes", "billing", "news", "ops", "chat");
        try (RedisCluster cluster = RedisCluster.start(3, 0)) {
            String url = "redis-cluster://" + cluster.nodes().get(0).address();
            try (RedisGcraBudget budget = new RedisGcraBudget(url, BudgetConfig.of(LIMITS), Duration.ofSeconds(2));
                 RedisSentMarks marks = new RedisSentMarks(url, Duration.ofMillis(TTL_MS), Duration.ofSeconds(2))) {
                MarkWrites writes = new MarkWrites(1000, TTL_MS);
                budget.foldMarkWrites(writes);
                marks.foldWritesInto(writes, Duration.ofHours(1));
                for (String bot : bots) {
                    marks.markResultWritten(bot, "m-1");
                    marks.markResultWritten(bot, "m-2");
                }
                for (String bot : bots.subList(0, 3)) { // three bots ask for budget: their marks ride on it
                    var d = budget.tryAcquire(BudgetRequest.live(bot, "7").markingInFlight("f-1",
                            dev.sluice.sender.idempotency.MarkValues.inFlight(1_700_000_000_000L, "7")));
                    assertThat(d.granted()).isTrue();
                    assertThat(d.inFlightMarked()).isTrue();
                    String key = BudgetKeys.sentMark(bot, "f-1");
                    assertThat(String.valueOf(cluster.primaryOf(key).orElseThrow().call("GET", key)))
                            .as("the grant's in-flight mark, on the bot's primary").isEqualTo("FLIGHT|||1700000000000|7");
                    assertThat(marks.get(bot, "f-1").state()).isEqualTo(SentMarks.State.IN_FLIGHT);
                }
                assertThat(writes.bots()).containsExactlyInAnyOrderElementsOf(bots.subList(3, 6));
                assertThat(marks.flush()).isEqualTo(6);
                assertThat(marks.redisWrites()).as("one flush call per bot left").isEqualTo(3);
                for (String bot : bots) {
                    for (String id : List.of("m-1", "m-2")) {
                        String key = BudgetKeys.sentMark(bot, id);
                        RedisNode owner = cluster.primaryOf(key).orElseThrow();
                        assertThat(String.valueOf(owner.call("GET", key))).startsWith("DONE|");
                    }
                }
            }
        }
    }

    private static void awaitState(RedisSentMarks marks, String id, SentMarks.State state) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (marks.get("alerts", id).state() != state && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(marks.get("alerts", id).state()).isEqualTo(state);
    }

    private static void loadScript(RedisInstance redis) {
        io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(redis.url());
        try (var c = client.connect()) {
            c.sync().scriptLoad(RedisGcraBudget.loadScript());
        } finally {
            client.shutdown();
        }
    }

    private static long pttl(RedisInstance redis, String key) {
        io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(redis.url());
        try (var c = client.connect()) {
            return c.sync().pttl(key);
        } finally {
            client.shutdown();
        }
    }
}
