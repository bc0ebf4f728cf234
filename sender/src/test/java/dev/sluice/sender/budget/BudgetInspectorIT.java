package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** BudgetInspector reads what budget.lua wrote, by the script's rules, and writes nothing. */
class BudgetInspectorIT {
    private static RedisInstance redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisLauncher.start();
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void shows_burst_left_gates_and_the_aimd_rate_without_writing() {
        String bot = "inspect-" + Long.toString(System.nanoTime(), 36);
        // global 1/s with burst 5: nothing refills noticeably during the test
        BudgetConfig config = BudgetConfig.builder(new BudgetLimits(1, 5, 0.1, 3)).build();
        try (RedisGcraBudget budget = new RedisGcraBudget(redis.url(), config, Duration.ofSeconds(2));
             BudgetInspector inspector = new BudgetInspector(redis.url(), config, Duration.ofSeconds(2))) {
            BudgetInspector.Status fresh = inspector.status(bot, "42");
            assertThat(fresh.global().tatEpochMicros()).isNull();
            assertThat(fresh.global().remainingBurst()).isEqualTo(5);
            assertThat(fresh.global().nextFreeInMs()).isZero();
            assertThat(fresh.gates()).isEmpty();
            assertThat(fresh.aimdMultiplier()).isEqualTo(1.0);

            assertThat(budget.tryAcquire(bot, "42").granted()).isTrue();
            assertThat(budget.tryAcquire(bot, "43").granted()).isTrue();
            assertThat(budget.tryAcquire(bot, "42").granted()).isTrue();
            BudgetInspector.Status s = inspector.status(bot, "42");
            assertThat(s.global().remainingBurst()).isEqualTo(2);
            assertThat(s.global().nextFreeInMs()).isZero();
            assertThat(s.chat().remainingBurst()).as("chat 42: 2 of burst 3 used at 0.1/s").isEqualTo(1);
            assertThat(s.group()).isNull();

            budget.penalize(bot, PenaltyScope.CHAT, "42", Duration.ofSeconds(20));
            budget.penalize(bot, PenaltyScope.GROUP, "-100", Duration.ofSeconds(5));
            budget.penalize(bot, PenaltyScope.BOT, "42", Duration.ofSeconds(10));
            BudgetInspector.Status p = inspector.status(bot, "-100");
            Map<String, Long> gates = p.gates().stream().collect(Collectors.toMap(g -> g.scope() + ":" + g.id(),
                    BudgetInspector.Gate::remainingMs));
            assertThat(gates).containsOnlyKeys("chat:42", "bot:null", "group:-100");
            assertThat(gates.get("chat:42")).isBetween(19_000L, 20_000L);
            assertThat(gates.get("bot:null")).isBetween(9_000L, 10_000L);
            assertThat(gates.get("group:-100")).isBetween(4_000L, 5_000L);
            assertThat(p.gates().get(0).scope()).as("longest first").isEqualTo("chat");
            assertThat(p.aimdMultiplier()).as("one bot-wide 429 halves the rate").isEqualTo(0.5);
            assertThat(p.effectiveRatePerS()).isCloseTo(0.5, org.assertj.core.data.Offset.offset(0.001));
            assertThat(p.aimdClimbsFromEpochMicros()).isGreaterThan(p.redisTimeEpochMicros());
            assertThat(p.group()).as("a negative chat id is a group").isNotNull();
            assertThat(p.group().remainingBurst()).isEqualTo(1);

            // read-only: the keys are exactly what the budget wrote
            RedisClient raw = RedisClient.create(redis.url());
            try (StatefulRedisConnection<String, String> c = raw.connect()) {
                List<String> before = c.sync().keys("sluice:{" + bot + "}*");
                String tat = c.sync().get(BudgetKeys.globalTat(bot));
                inspector.status(bot, "99");
                assertThat(c.sync().keys("sluice:{" + bot + "}*")).containsExactlyInAnyOrderElementsOf(before);
                assertThat(c.sync().get(BudgetKeys.globalTat(bot))).isEqualTo(tat);
            } finally {
                raw.shutdown();
            }
        }
    }

    /** Session 17: what an operator asks when a bot holds few reservations or stops after a 429. */
    @Test
    void shows_the_critical_mark_and_a_gate_closed_behind_a_penalty_probe() throws Exception {
        String bot = "inspect-" + Long.toString(System.nanoTime(), 36);
        BudgetConfig config = BudgetConfig.builder(new BudgetLimits(100, 10, 10, 10))
                .reservationCriticalMemory(Duration.ofMinutes(10)).penaltyProbeWindow(Duration.ofSeconds(5)).build();
        try (RedisGcraBudget budget = new RedisGcraBudget(redis.url(), config, Duration.ofSeconds(2));
             BudgetInspector inspector = new BudgetInspector(redis.url(), config, Duration.ofSeconds(2))) {
            assertThat(budget.tryAcquire(BudgetRequest.live(bot, "1")).granted()).isTrue();
            assertThat(inspector.status(bot, null).criticalMarkMs()).as("routine grants leave no mark").isNull();
            assertThat(budget.tryAcquire(BudgetRequest.live(bot, "2").asUrgent()).granted()).isTrue();
            assertThat(inspector.status(bot, null).criticalMarkMs()).isBetween(590_000L, 600_000L);

            budget.penalize(bot, PenaltyScope.BOT, "1", Duration.ofMillis(100));
            assertThat(inspector.status(bot, null).gates()).extracting(BudgetInspector.Gate::scope).containsExactly("bot");
            long lifted = System.nanoTime() + Duration.ofMillis(150).toNanos();
            while (System.nanoTime() < lifted) {
                java.util.concurrent.locks.LockSupport.parkNanos(lifted - System.nanoTime());
            }
            assertThat(budget.tryAcquire(BudgetRequest.live(bot, "3")).granted()).as("the probe").isTrue();
            List<BudgetInspector.Gate> gates = inspector.status(bot, null).gates();
            assertThat(gates).extracting(BudgetInspector.Gate::scope).containsExactly("bot-probe");
            assertThat(gates.get(0).remainingMs()).isBetween(4_000L, 5_000L);
        }
    }

    /**
     * Found from outside: `sluice budget status` interprets Redis with the settings it is given (dev's tools file has no
     * budget keys), and nothing said whether they were the senders'. It lists the live senders' published limits of
     * the key, each with the keys that differ from the settings of the reading.
     */
    @Test
    void lists_the_live_senders_published_limits_and_what_differs_from_the_reading() {
        String bot = "inspect-" + Long.toString(System.nanoTime(), 36);
        BudgetConfig reading = BudgetConfig.builder(new BudgetLimits(30, 1, 1, 3)).build();
        BudgetConfig slower = BudgetConfig.builder(new BudgetLimits(20, 1, 1, 3)).build();
        try (BudgetInspector inspector = new BudgetInspector(redis.url(), reading, Duration.ofSeconds(2))) {
            assertThat(inspector.status(bot, null).senders()).isEmpty();
            try (SharedLimitsCheck same = new SharedLimitsCheck(redis.url(), "sender-a",
                         Map.of(bot, SharedLimits.of(reading, bot)), Duration.ofMinutes(1), Duration.ofSeconds(2));
                 SharedLimitsCheck other = new SharedLimitsCheck(redis.url(), "sender-b",
                         Map.of(bot, SharedLimits.of(slower, bot)), Duration.ofMinutes(1), Duration.ofSeconds(2))) {
                same.round();
                other.round();
                List<BudgetInspector.Publisher> senders = inspector.status(bot, null).senders();
                assertThat(senders).extracting(BudgetInspector.Publisher::instance).containsExactly("sender-a", "sender-b");
                assertThat(senders.get(0).differences()).isEmpty();
                assertThat(senders.get(1).differences()).containsExactly(
                        "budget.global.rate.per.s=30 here, 20 at sender sender-b");
                assertThat(senders).allSatisfy(p -> assertThat(p.expiresInMs()).isBetween(1L, 3 * 60_000L));
            }
            assertThat(inspector.status(bot, null).senders()).as("closed senders remove their fields").isEmpty();
        }
    }

    @Test
    void gcra_arithmetic_matches_the_script_rule() {
        // interval 100, burst 3 (tolerance 200): TAT = now + 150 -> one more passes now, next free at +0
        assertThat(BudgetInspector.gcra(1_150L, 100, 3, 1_000L).remainingBurst()).isEqualTo(1);
        // TAT = now + 300: allow at TAT - 200 = now + 100
        BudgetInspector.Gcra full = BudgetInspector.gcra(1_300L, 100, 3, 1_000L);
        assertThat(full.remainingBurst()).isZero();
        assertThat(full.nextFreeInMs()).isEqualTo(1); // 100 us, rounded up to whole ms
        assertThat(BudgetInspector.gcra(500L, 100, 3, 1_000L).remainingBurst()).as("TAT in the past").isEqualTo(3);
    }
}
