package dev.sluice.sender.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetKeys;
import dev.sluice.sender.budget.BudgetLimits;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.Limit;
import dev.sluice.sender.budget.MarkWrites;
import dev.sluice.sender.budget.RedisGcraBudget;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import io.lettuce.core.RedisClient;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 19, session 9: what a delivered message costs redis-server inside the script, counted with
 * {@code INFO commandstats} on a real redis-server (the one on the PATH, Debian's 7.0, and the 6.2 bundled in
 * embedded-redis): a decision reads every key it needs with one MGET (bot, chat, sent mark), and a SENT mark replaced by
 * its DONE before the bot's next call is never written. A marked message is ALREADY_SENT whether it would be granted
 * or refused, consumes nothing and its mark is left as it was; a batch naming a chat twice reads its own write.
 */
class MarkCostIT {
    private static final long TTL_MS = Duration.ofHours(1).toMillis();

    @Test
    void a_checked_grant_reads_its_keys_with_one_mget() {
        try (RedisInstance redis = RedisLauncher.localProcess().launch()) {
            checkedGrantsAnswerTheSame(redis);
        }
    }

    @Test
    void on_redis_6_2_too() {
        try (RedisInstance redis = RedisLauncher.bundledBinary().launch()) {
            assertThat(majorVersion(redis)).isEqualTo(6);
            checkedGrantsAnswerTheSame(redis);
        }
    }

    private static void checkedGrantsAnswerTheSame(RedisInstance redis) {
        RedisClient client = RedisClient.create(redis.url());
        try (StatefulRedisConnection<String, String> c = client.connect();
             RedisGcraBudget budget = new RedisGcraBudget(redis.url(),
                     BudgetConfig.of(new BudgetLimits(1, 1, 1000, 1000)), Duration.ofSeconds(2))) {
            budget.foldMarkWrites(new MarkWrites(100, TTL_MS, Duration.ofHours(1)));
            budget.tryAcquire(BudgetRequest.live("warmup", "1")); // NOSCRIPT's EVAL out of the way
            String bot = "cost";
            c.sync().set(BudgetKeys.sentMark(bot, "m-1"), "SENT|DELIVERED|42|1700000000000|9", SetArgs.Builder.px(100_000));
            c.sync().set(BudgetKeys.sentMark(bot, "m-4"), "DONE||", SetArgs.Builder.px(100_000));

            // one message alone: TIME, MGET bot chat mark, SET chat, SET mark, SET bot
            Map<String, Long> before = stats(c);
            Decision one = budget.tryAcquire(request(bot, "8", "m-0"));
            Map<String, Long> d = delta(before, stats(c));
            assertThat(one.granted()).isTrue();
            assertThat(one.inFlightMarked()).isTrue();
            assertThat(one.sentMarkChecked()).isTrue();
            assertThat(d.get("get")).as("no GET of its own per key").isZero();
            assertThat(d.get("mget")).as("one read").isEqualTo(1);
            assertThat(d.get("set")).as("chat, in-flight mark, bot").isEqualTo(3);
            assertThat(d.get("time")).isEqualTo(1);
            assertThat(c.sync().get(BudgetKeys.sentMark(bot, "m-0"))).isEqualTo("FLIGHT|||1700000000000|8");
            assertThat(c.sync().pttl(BudgetKeys.sentMark(bot, "m-0"))).isBetween(TTL_MS - 60_000, TTL_MS);

            // a batch after the bot's 1/s slot: the marked ones answer ALREADY_SENT, granted or refused alike
            String bot2 = "cost2";
            c.sync().set(BudgetKeys.sentMark(bot2, "m-1"), "SENT|DELIVERED|42|1700000000000|9", SetArgs.Builder.px(100_000));
            c.sync().set(BudgetKeys.sentMark(bot2, "m-4"), "DONE||", SetArgs.Builder.px(100_000));
            List<Decision> batch = budget.tryAcquireAll(bot2, List.of(request(bot2, "9", "m-1"), request(bot2, "10", "m-2"),
                    request(bot2, "11", "m-3"), request(bot2, "12", "m-4")));
            assertThat(batch.get(0).limit()).isEqualTo(Limit.ALREADY_SENT);
            assertThat(batch.get(0).sentMark()).isEqualTo("SENT|DELIVERED|42|1700000000000|9");
            assertThat(batch.get(1).granted()).as("the marked message took no budget: the next one gets the slot").isTrue();
            assertThat(batch.get(1).inFlightMarked()).isTrue();
            assertThat(batch.get(2).limit()).isEqualTo(Limit.GLOBAL);
            assertThat(batch.get(2).sentMarkChecked()).isTrue();
            assertThat(batch.get(3).limit()).as("marked and refused: still answered by its mark").isEqualTo(Limit.ALREADY_SENT);
            assertThat(batch.get(3).sentMark()).isEqualTo("DONE||");
            assertThat(c.sync().get(BudgetKeys.sentMark(bot2, "m-1"))).as("left as it was")
                    .isEqualTo("SENT|DELIVERED|42|1700000000000|9");
            assertThat(c.sync().pttl(BudgetKeys.sentMark(bot2, "m-1"))).as("its TTL too").isLessThanOrEqualTo(100_000);
            assertThat(c.sync().get(BudgetKeys.sentMark(bot2, "m-2"))).isEqualTo("FLIGHT|||1700000000000|10");
            assertThat(c.sync().exists(BudgetKeys.sentMark(bot2, "m-3"))).as("refused: no mark").isZero();

            // one chat twice in a batch (chat 1 per s): the second reads the first's write and is refused
            String bot3 = "cost3";
            BudgetConfig perChat = BudgetConfig.of(new BudgetLimits(1000, 100, 1, 1));
            try (RedisGcraBudget chatLimited = new RedisGcraBudget(redis.url(), perChat, Duration.ofSeconds(2))) {
                List<Decision> twice = chatLimited.tryAcquireAll(bot3, List.of(BudgetRequest.live(bot3, "5"),
                        BudgetRequest.live(bot3, "5")));
                assertThat(twice.get(0).granted()).isTrue();
                assertThat(twice.get(1).limit()).isEqualTo(Limit.CHAT);
            }
        } finally {
            client.shutdown();
        }
    }

    @Test
    void a_sent_mark_replaced_by_its_done_before_the_bots_next_call_is_never_written() {
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             RedisGcraBudget budget = new RedisGcraBudget(redis.url(),
                     BudgetConfig.of(new BudgetLimits(1000, 100, 1000, 100)), Duration.ofSeconds(2));
             RedisSentMarks marks = new RedisSentMarks(redis.url(), Duration.ofMillis(TTL_MS), Duration.ofSeconds(2))) {
            MarkWrites writes = new MarkWrites(100, TTL_MS, Duration.ofHours(1));
            budget.foldMarkWrites(writes);
            marks.foldWritesInto(writes, Duration.ofHours(1)); // no timed flush during the test
            RedisClient client = RedisClient.create(redis.url());
            try (StatefulRedisConnection<String, String> c = client.connect()) {
                budget.tryAcquire(BudgetRequest.live("warmup", "1"));
                marks.markSentLater("alerts", "a", "DELIVERED", 7L, 1_700_000_000_000L, "42"); // then its result: DONE
                marks.markResultWritten("alerts", "a");
                marks.markSentLater("alerts", "b", "DELIVERED", 8L, 1_700_000_000_000L, "43"); // its result still pending
                assertThat(marks.redisWrites()).isZero();

                Map<String, Long> before = stats(c);
                assertThat(budget.tryAcquire(BudgetRequest.live("alerts", "44")).granted()).isTrue();
                Map<String, Long> d = delta(before, stats(c));
                assertThat(d.get("set")).as("chat, bot and a's DONE: a's SENT never written, b's held").isEqualTo(3);
                assertThat(marks.get("alerts", "a").state()).isEqualTo(SentMarks.State.RESULT_WRITTEN);
                assertThat(marks.get("alerts", "b").state()).isEqualTo(SentMarks.State.NONE);
                assertThat(writes.size()).isEqualTo(1);

                assertThat(marks.flush()).as("a flush by hand writes the held SENT").isEqualTo(1);
                assertThat(marks.get("alerts", "b")).isEqualTo(
                        new SentMarks.Mark(SentMarks.State.SENT, "DELIVERED", 8L, 1_700_000_000_000L, "43"));
            } finally {
                client.shutdown();
            }
        }
    }

    private static BudgetRequest request(String bot, String chat, String id) {
        return BudgetRequest.live(bot, chat).checkingSentMark(id).markingInFlight(id,
                dev.sluice.sender.idempotency.MarkValues.inFlight(1_700_000_000_000L, chat));
    }

    private static int majorVersion(RedisInstance redis) {
        RedisClient client = RedisClient.create(redis.url());
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            String info = c.sync().info("server");
            String v = info.lines().filter(l -> l.startsWith("redis_version:")).findFirst().orElseThrow().substring(14);
            return Integer.parseInt(v.substring(0, v.indexOf('.')));
        } finally {
            client.shutdown();
        }
    }

    /** calls per command from INFO commandstats (script-internal calls included). */
    private static Map<String, Long> stats(StatefulRedisConnection<String, String> c) {
        Map<String, Long> out = new HashMap<>();
        for (String line : c.sync().info("commandstats").lines().toList()) {
            if (line.startsWith("cmdstat_")) {
                String name = line.substring(8, line.indexOf(':'));
                String calls = line.substring(line.indexOf("calls=") + 6);
                out.put(name, Long.parseLong(calls.substring(0, calls.indexOf(','))));
            }
        }
        return out;
    }

    private static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> d = new HashMap<>();
        after.forEach((k, v) -> d.put(k, v - before.getOrDefault(k, 0L)));
        for (String k : List.of("get", "mget", "set", "time")) {
            d.putIfAbsent(k, 0L);
        }
        return d;
    }
}
