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
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Issue 19, session 11: the DONE marks of many bots cost few script calls. On one Redis node (standalone or Sentinel)
 * any bot's budget call carries the pending marks of any bot (keys of different hash tags may share a call on one
 * node), and the flush writes what is left in calls of {@link MarkWrites#MAX_PER_CALL} marks, not one call per bot.
 * On a Redis Cluster a call carries only marks whose key hashes to the slot of the call's keys (a script's keys must
 * share one slot), and the flush writes one call per slot. Counted on real redis-servers: {@code INFO commandstats}
 * (EVALSHA and EVAL, every client) on one node; the marks' own call count on the cluster. The values written are the
 * same as before (DONE marks with the sent-mark TTL), only the calls carrying them change.
 */
class SharedMarkCallsIT {
    private static final long TTL_MS = Duration.ofHours(1).toMillis();
    private static final BudgetLimits LIMITS = new BudgetLimits(1000, 100, 1000, 100);
    private static final int BOTS = 40;
    private static final int MARKS_PER_BOT = 3;

    @Test
    void on_one_node_any_bots_call_carries_every_bots_marks_and_the_flush_needs_no_call_per_bot() {
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             RedisGcraBudget budget = new RedisGcraBudget(redis.url(), BudgetConfig.of(LIMITS), Duration.ofSeconds(2));
             RedisSentMarks marks = new RedisSentMarks(redis.url(), Duration.ofMillis(TTL_MS), Duration.ofSeconds(2))) {
            RedisClient client = RedisClient.create(redis.url());
            try (StatefulRedisConnection<String, String> admin = client.connect()) {
                admin.sync().scriptLoad(RedisGcraBudget.loadScript()); // no NOSCRIPT retry in the counts below
                MarkWrites writes = new MarkWrites(1000, TTL_MS, Duration.ofHours(1));
                assertThat(budget.foldMarkWrites(writes)).isTrue();
                marks.foldWritesInto(writes, Duration.ofHours(1)); // no timed flush during the test: flush() by hand
                for (int b = 0; b < BOTS; b++) {
                    for (int m = 0; m < MARKS_PER_BOT; m++) {
                        marks.markResultWritten("bot-" + b, "m-" + m);
                    }
                }
                int total = BOTS * MARKS_PER_BOT;
                assertThat(writes.size()).isEqualTo(total);
                assertThat(marks.redisWrites()).as("all folded, none written yet").isZero();

                long before = scriptCalls(admin);
                assertThat(budget.tryAcquire(BudgetRequest.live("bot-7", "42")).granted()).isTrue();
                long byTheDecision = scriptCalls(admin) - before;
                for (int m = 0; m < MARKS_PER_BOT; m++) {
                    assertThat(marks.get("bot-7", "m-" + m).state()).as("the calling bot's own marks ride first")
                            .isEqualTo(SentMarks.State.RESULT_WRITTEN);
                }
                int carried = total - writes.size();
                int flushed = marks.flush();
                long calls = scriptCalls(admin) - before;
                System.out.printf("%d DONE marks of %d bots: the decision carried %d, the flush wrote %d in %d calls;"
                        + " %d script calls in all%n", total, BOTS, carried, flushed, marks.redisWrites(), calls);
                assertThat(byTheDecision).isEqualTo(1);
                assertThat(carried).as("one call carries up to MAX_PER_CALL marks, of any bot")
                        .isEqualTo(Math.min(total, MarkWrites.MAX_PER_CALL));
                assertThat(flushed).isEqualTo(total - carried);
                int perCall = MarkWrites.MAX_PER_CALL;
                assertThat(marks.redisWrites()).as("the flush: calls of up to MAX_PER_CALL marks, not one per bot")
                        .isEqualTo((total - carried + perCall - 1) / perCall);
                assertThat(calls).isEqualTo(1 + marks.redisWrites());
                assertThat(writes.size()).isZero();
                for (int b = 0; b < BOTS; b++) {
                    for (int m = 0; m < MARKS_PER_BOT; m++) {
                        String key = BudgetKeys.sentMark("bot-" + b, "m-" + m);
                        assertThat(admin.sync().get(key)).isEqualTo("DONE||");
                        assertThat(admin.sync().pttl(key)).isBetween(TTL_MS - 60_000, TTL_MS);
                    }
                }
            } finally {
                client.shutdown();
            }
        }
    }

    @Test
    void on_a_cluster_a_call_carries_only_the_marks_of_its_slot_and_the_flush_makes_one_call_per_slot() throws Exception {
        String bot = "alerts";
        int slot = SlotHash.getSlot(BudgetKeys.sentMark(bot, "x"));
        String twin = null; // another bot whose keys hash to the same slot
        for (int i = 0; twin == null; i++) {
            if (SlotHash.getSlot(BudgetKeys.sentMark("twin-" + i, "x")) == slot) {
                twin = "twin-" + i;
            }
        }
        List<String> others = List.of("quakes", "billing", "news", "ops", "chat");
        Set<Integer> otherSlots = new HashSet<>();
        for (String o : others) {
            otherSlots.add(SlotHash.getSlot(BudgetKeys.sentMark(o, "x")));
        }
        assertThat(otherSlots).as("the other bots' slots differ from the caller's").doesNotContain(slot).hasSize(others.size());
        try (RedisCluster cluster = RedisCluster.start(3, 0)) {
            String url = "redis-cluster://" + cluster.nodes().get(0).address();
            for (RedisNode primary : cluster.primaries()) {
                primary.call("SCRIPT", "LOAD", RedisGcraBudget.loadScript()); // no NOSCRIPT retry in the counts below
            }
            try (RedisGcraBudget budget = new RedisGcraBudget(url, BudgetConfig.of(LIMITS), Duration.ofSeconds(2));
                 RedisSentMarks marks = new RedisSentMarks(url, Duration.ofMillis(TTL_MS), Duration.ofSeconds(2))) {
                MarkWrites writes = new MarkWrites(1000, TTL_MS, Duration.ofHours(1));
                budget.foldMarkWrites(writes);
                marks.foldWritesInto(writes, Duration.ofHours(1));
                List<String> all = new ArrayList<>(others);
                all.add(bot);
                all.add(twin);
                for (String b : all) {
                    marks.markResultWritten(b, "m-1");
                    marks.markResultWritten(b, "m-2");
                }
                assertThat(budget.tryAcquire(BudgetRequest.live(bot, "7")).granted()).isTrue();
                for (String b : List.of(bot, twin)) {
                    for (String id : List.of("m-1", "m-2")) {
                        String key = BudgetKeys.sentMark(b, id);
                        assertThat(String.valueOf(cluster.primaryOf(key).orElseThrow().call("GET", key)))
                                .as("%s rode on the call of %s: same slot", key, bot).startsWith("DONE|");
                    }
                }
                assertThat(writes.bots()).as("other slots' marks wait").containsExactlyInAnyOrderElementsOf(others);
                assertThat(marks.flush()).isEqualTo(2 * others.size());
                assertThat(marks.redisWrites()).as("one flush call per slot").isEqualTo(otherSlots.size());
                for (String b : others) {
                    for (String id : List.of("m-1", "m-2")) {
                        String key = BudgetKeys.sentMark(b, id);
                        RedisNode owner = cluster.primaryOf(key).orElseThrow();
                        assertThat(String.valueOf(owner.call("GET", key))).startsWith("DONE|");
                    }
                }
            }
        }
    }

    /** EVALSHA and EVAL calls of every client so far ({@code INFO commandstats}; the script's own commands not). */
    private static long scriptCalls(StatefulRedisConnection<String, String> c) {
        long n = 0;
        for (String line : c.sync().info("commandstats").lines().toList()) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                String calls = line.substring(line.indexOf("calls=") + 6);
                n += Long.parseLong(calls.substring(0, calls.indexOf(',')));
            }
        }
        return n;
    }
}
