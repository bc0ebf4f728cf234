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
            assertThat(keys).containsExactlyInAnyOrder("sluice:{" + bot + "}:bot", "sluice:{" + bot + "}:chat:7",
                    "sluice:{" + bot + "}:chat:8", "sluice:{" + bot + "}:recent429");
            for (String k : keys) {
                assertThat(k).startsWith("sluice:{" + bot + "}:");
            }
            // global: one message at 2/s -> refills in 500 ms; chat: one of burst 2 at 0.5/s -> 2000 ms
            assertThat(r.pttl("sluice:{" + bot + "}:bot")).isBetween(400L, 500L);
            assertThat(r.pttl("sluice:{" + bot + "}:chat:7")).isBetween(1900L, 2000L);
            assertThat(r.pttl("sluice:{" + bot + "}:chat:8")).isBetween(29_000L, 30_001L);
            assertThat(r.get("sluice:{" + bot + "}:chat:8")).as("a gate only: no TAT").startsWith("|");
            // the chat's 429 is remembered for the look-back only (a bot-wide 429 within it takes its end)
            assertThat(r.pttl("sluice:{" + bot + "}:recent429")).isBetween(900L, 1000L);
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

    @Test
    void a_drained_bucket_of_3_refilling_1_per_300ms_is_full_again_only_after_900ms_key_expiry_never_refills_early() {
        // the "3 refilling 1 per 15 s, full only after 45 s", scaled by 1/50
        RedisCommands<String, String> r = inspection.sync();
        String key = "sluice:{" + bot + "}:bot";
        try (BudgetPort b = budget(new BudgetLimits(1 / 0.3, 3, 1000, 1000))) {
            for (int i = 0; i < 3; i++) {
                assertThat(b.tryAcquire(bot, "d" + i).granted()).isTrue();
            }
            long drained = System.nanoTime();
            assertThat(b.tryAcquire(bot, "x").limit()).isEqualTo(Limit.GLOBAL);
            assertThat(r.pttl(key)).as("TTL = time until full again").isBetween(850L, 900L);
            waitFor(Duration.ofNanos(drained + Duration.ofMillis(700).toNanos() - System.nanoTime()));
            long left = r.pttl(key);
            assertThat(left).as("still there after 700 ms of idleness").isBetween(1L, 200L);
            assertThat(b.tryAcquire(bot, "a").granted()).isTrue();
            assertThat(b.tryAcquire(bot, "b").granted()).isTrue();
            Decision third = b.tryAcquire(bot, "c");
            assertThat(third.granted()).as("only 2 of 3 tokens back after 700 ms").isFalse();
            assertThat(third.retryIn()).isLessThanOrEqualTo(Duration.ofMillis(200));
        }
        String bot2 = bot + "-full";
        try (BudgetPort b = budget(new BudgetLimits(1 / 0.3, 3, 1000, 1000))) {
            for (int i = 0; i < 3; i++) {
                assertThat(b.tryAcquire(bot2, "d" + i).granted()).isTrue();
            }
            waitFor(Duration.ofMillis(900));
            // Redis expires a key within milliseconds of its PX deadline; allow for a loaded machine.
            org.awaitility.Awaitility.await("key expired when the bucket is full").atMost(Duration.ofMillis(250))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> r.exists("sluice:{" + bot2 + "}:bot") == 0);
            for (int i = 0; i < 3; i++) {
                assertThat(b.tryAcquire(bot2, "e" + i).granted()).as("full again after 900 ms: %d", i).isTrue();
            }
        }
    }

    @Test
    void group_backfill_gate_and_aimd_keys_have_ttls_of_at_least_their_time_to_refill() {
        RedisCommands<String, String> r = inspection.sync();
        String tag = "sluice:{" + bot + "}:";
        BudgetConfig config = BudgetConfig.builder(new BudgetLimits(10, 1, 1, 1)).backfillHeadroom(0.5)
                .aimd(0.5, 0.1, 0.1).groupArrivalMargin(Duration.ZERO).build(); // the group at exactly 20/min
        try (BudgetPort b = budget(config)) {
            assertThat(b.tryAcquire(BudgetRequest.backfill(bot, "-100")).granted()).isTrue();
            // group 20/min burst 1: 3 s; chat 1/s: 1 s; global 10/s: 100 ms; backfill (1-0.5)*10/s: 200 ms
            assertThat(r.pttl(tag + "group:-100")).isBetween(2900L, 3000L);
            assertThat(r.pttl(tag + "chat:-100")).isBetween(900L, 1000L);
            assertThat(r.pttl(tag + "bot")).as("the later of global (100 ms) and backfill (200 ms) TAT")
                    .isBetween(100L, 200L);
            b.penalize(bot, PenaltyScope.GROUP, "-100", Duration.ofSeconds(20));
            assertThat(r.pttl(tag + "group:-100")).isBetween(19_000L, 20_000L);
            b.penalize(bot, PenaltyScope.BOT, "-100", Duration.ofSeconds(2));
            // multiplier 0.5 climbs at 0.1/s from when the gate lifts: 2 s + 5 s
            assertThat(r.get(tag + "bot").split("\\|", -1)[2]).isEqualTo("500000");
            assertThat(r.pttl(tag + "bot")).isBetween(6_900L, 7_001L);
        }
    }

    @Test
    void the_script_uses_only_declared_keys_of_one_hash_tag() {
        String script = RedisGcraBudget.loadScript();
        assertThat(script).contains("redis.call('TIME')").doesNotContain("KEYS[0]").doesNotContain("redis.call('KEYS'");
        assertThat(script).as("no key names built inside the script").doesNotContain("'sluice:");
    }

    @Test
    void per_bot_rate_and_paid_broadcast_reach_the_script() {
        String paid = bot + "-paid";
        String slow = bot + "-slow";
        BudgetConfig config = BudgetConfig.builder(new BudgetLimits(30, 1, 1000, 1000))
                .paidBroadcast(paid).botRate(slow, 2).build();
        try (BudgetPort b = budget(config)) {
            assertThat(b.tryAcquire(paid, "a").granted()).isTrue();
            assertThat(b.tryAcquire(paid, "b").retryIn()).as("1000/s").isLessThanOrEqualTo(Duration.ofMillis(1));
            assertThat(b.tryAcquire(slow, "a").granted()).isTrue();
            assertThat(b.tryAcquire(slow, "b").retryIn()).as("2/s").isBetween(Duration.ofMillis(400), Duration.ofMillis(500));
        }
    }

    @Test
    void a_request_naming_its_message_reads_the_sent_mark_in_the_same_call_and_a_marked_one_consumes_nothing() {
        RedisCommands<String, String> r = inspection.sync();
        String marked = bot + "-marks";
        r.set("sluice:{" + marked + "}:sent:m-1", "SENT|DELIVERED|42|1700000000000|9");
        try (RedisGcraBudget b = new RedisGcraBudget(redis.url(), new BudgetLimits(1, 1, 1000, 1000), Duration.ofSeconds(2))) {
            long before = b.redisRoundTrips();
            List<Decision> d = b.tryAcquireAll(marked, List.of(
                    BudgetRequest.live(marked, "9").checkingSentMark("m-1"),
                    BudgetRequest.live(marked, "10").checkingSentMark("m-2"),
                    BudgetRequest.live(marked, "11").checkingSentMark("m-3")));
            assertThat(b.redisRoundTrips() - before).as("one EVALSHA for decisions and marks").isEqualTo(1);
            assertThat(d.get(0).limit()).isEqualTo(Limit.ALREADY_SENT);
            assertThat(d.get(0).sentMark()).isEqualTo("SENT|DELIVERED|42|1700000000000|9");
            assertThat(d.get(0).retryIn()).isZero();
            assertThat(d.get(1).granted()).as("the marked message took no budget: the next one gets the token").isTrue();
            assertThat(d.get(1).sentMarkChecked()).isTrue();
            assertThat(d.get(2).limit()).isEqualTo(Limit.GLOBAL);
            assertThat(d.get(2).sentMarkChecked()).isTrue();
            assertThat(b.tryAcquire(BudgetRequest.live(marked, "12")).sentMarkChecked()).isFalse();
        }
    }

    @Test
    void a_bot_started_drained_after_an_outage_gets_no_fresh_burst_from_an_empty_redis() {
        String fresh = bot + "-drained";
        try (RedisGcraBudget b = new RedisGcraBudget(redis.url(), new BudgetLimits(10, 5, 1000, 1000), Duration.ofSeconds(2))) {
            b.startDrained(fresh);
            Decision first = b.tryAcquire(fresh, "1");
            assertThat(first.limit()).as("burst 5 at 10/s: the bucket starts empty, then shut for max(1 s, probe interval)"
                    + " + 1 s (Lettuce's longest reconnect delay) more").isEqualTo(Limit.GLOBAL);
            assertThat(first.retryIn()).isBetween(Duration.ofMillis(2050), Duration.ofMillis(2100));
            waitFor(first.retryIn());
            assertThat(b.tryAcquire(fresh, "1").granted()).isTrue();
            assertThat(b.tryAcquire(fresh, "2").granted()).as("one per interval, no burst").isFalse();
            String tatBefore = inspection.sync().get("sluice:{" + fresh + "}:bot");
            b.seedGlobalTat(fresh, Duration.ZERO);
            assertThat(inspection.sync().get("sluice:{" + fresh + "}:bot")).as("a later TAT is kept").isEqualTo(tatBefore);
        }
    }

    @Test
    void a_live_request_may_take_the_next_global_slot_within_its_horizon_instead_of_a_refusal() {
        String r = bot + "-reserve";
        Duration horizon = Duration.ofMillis(500);
        try (RedisGcraBudget b = new RedisGcraBudget(redis.url(), new BudgetLimits(10, 1, 1, 1), Duration.ofSeconds(2))) {
            List<BudgetRequest> batch = new java.util.ArrayList<>();
            for (int i = 0; i < 8; i++) {
                batch.add(BudgetRequest.live(r, "c" + i).reservingUpTo(horizon));
            }
            List<Decision> d = b.tryAcquireAll(r, batch);
            assertThat(d.get(0).granted()).isTrue();
            assertThat(d.get(0).isReservation()).isFalse();
            // 10/s: slots 100 ms apart; each taken as a reservation up to 500 ms ahead, the rest refused
            for (int i = 1; i <= 5; i++) {
                assertThat(d.get(i).isReservation()).as("candidate %d", i).isTrue();
                assertThat(d.get(i).retryIn().toMillis()).as("candidate %d", i).isBetween(100L * i - 5, 100L * i);
            }
            assertThat(d.get(6).limit()).isEqualTo(Limit.GLOBAL);
            assertThat(d.get(6).retryIn().toMillis()).isBetween(595L, 600L);
            assertThat(b.tryAcquire(BudgetRequest.live(r, "x")).retryIn().toMillis()).as("without a reservation: refused")
                    .isBetween(590L, 600L);
            assertThat(b.tryAcquire(BudgetRequest.backfill(r, "y").reservingUpTo(horizon)).granted())
                    .as("backfill never reserves").isFalse();
            Decision sameChat = b.tryAcquire(BudgetRequest.live(r, "c1").reservingUpTo(Duration.ofSeconds(5)));
            assertThat(sameChat.limit()).as("a chat limit is never reserved").isEqualTo(Limit.CHAT);
            assertThat(inspection.sync().pttl("sluice:{" + r + "}:chat:c5")).as("chat TAT from the reserved instant")
                    .isBetween(1_400L, 1_500L);
        }
    }

    @Test
    void with_the_arrival_guard_a_reservation_takes_its_slot_at_the_floor_instead_of_a_refusal() {
        String g = bot + "-guard";
        BudgetConfig config = BudgetConfig.builder(new BudgetLimits(2, 100, 1000, 100)).arrivalGuardLimitPerS(2).build();
        try (RedisGcraBudget b = new RedisGcraBudget(redis.url(), config, Duration.ofSeconds(2))) {
            long late = b.tryAcquire(g, "1").grantSeq();
            b.reportLateAnswer(g, late);
            assertThat(b.tryAcquire(g, "2").grantSeq()).isEqualTo(late + 1);
            // the floor is ~1 s away, beyond the 500 ms horizon, but the GCRA itself would grant now: the slot is
            // reserved at the floor, so lanes do not fall back to refusals and retries each time a floor is set
            Decision d = b.tryAcquire(BudgetRequest.live(g, "3").reservingUpTo(Duration.ofMillis(500)));
            assertThat(d.isReservation()).isTrue();
            assertThat(d.retryIn()).isGreaterThan(Duration.ofMillis(800)).isLessThanOrEqualTo(Duration.ofSeconds(1));
            assertThat(d.grantSeq()).isEqualTo(late + 2);
            assertThat(inspection.sync().get("sluice:{" + g + "}:arrivals")).as("the floor was reached: dropped")
                    .isEqualTo(Long.toString(late + 2) + "|");
        }
    }

    /** 10/s (slots 100 ms apart), burst 1; horizons 500 ms (urgent, and routine of a bot sending no CRITICAL) and 100. */
    private static BudgetConfig twoHorizons(Duration memory) {
        return BudgetConfig.builder(new BudgetLimits(10, 1, 1000, 1000)).reservationMax(Duration.ofMillis(500))
                .reservationRoutineMax(Duration.ofMillis(100)).reservationCriticalMemory(memory).build();
    }

    private static List<BudgetRequest> routine(String bot, String prefix, int n) {
        List<BudgetRequest> batch = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            batch.add(BudgetRequest.live(bot, prefix + i).reservingUpTo(Duration.ofMillis(500)));
        }
        return batch;
    }

    private static long reservations(List<Decision> d) {
        return d.stream().filter(Decision::isReservation).count();
    }

    @Test
    void routine_requests_reserve_over_the_full_horizon_until_a_critical_grant_on_any_sender_holds_them_to_the_routine_one() {
        String quiet = bot + "-no-critical";
        String busy = bot + "-critical";
        try (RedisGcraBudget a = new RedisGcraBudget(redis.url(), twoHorizons(Duration.ofMinutes(1)), Duration.ofSeconds(2));
             RedisGcraBudget other = new RedisGcraBudget(redis.url(), twoHorizons(Duration.ofMinutes(1)),
                     Duration.ofSeconds(2))) {
            // a bot with no CRITICAL grant: routine candidates take slots up to 500 ms ahead (1 now + 5 reserved)
            List<Decision> d = a.tryAcquireAll(quiet, routine(quiet, "c", 8));
            assertThat(d.get(0).granted()).isTrue();
            assertThat(reservations(d)).isEqualTo(5);
            assertThat(a.routineHorizonShort(quiet)).isFalse();
            assertThat(inspection.sync().exists("sluice:{" + quiet + "}:critical")).isZero();

            // another sender grants a CRITICAL message of the other bot: this sender's routine candidates of that
            // bot now reserve at most 100 ms ahead (one slot), though they ask for 500
            Decision urgent = other.tryAcquire(BudgetRequest.live(busy, "u").reservingUpTo(Duration.ofMillis(500))
                    .asUrgent());
            assertThat(urgent.granted()).isTrue();
            assertThat(inspection.sync().pttl("sluice:{" + busy + "}:critical")).isBetween(59_000L, 60_000L);
            d = a.tryAcquireAll(busy, routine(busy, "c", 8));
            assertThat(reservations(d)).as("one slot within 100 ms").isEqualTo(1);
            assertThat(d.get(0).retryIn().toMillis()).isBetween(1L, 100L);
            assertThat(d.get(1).limit()).isEqualTo(Limit.GLOBAL);
            assertThat(a.routineHorizonShort(busy)).isTrue();
            // an urgent request of the same bot still reserves over the full horizon behind them
            Decision next = a.tryAcquire(BudgetRequest.live(busy, "v").reservingUpTo(Duration.ofMillis(500)).asUrgent());
            assertThat(next.isReservation()).isTrue();
            assertThat(next.retryIn().toMillis()).isBetween(101L, 200L);
            // and the quiet bot keeps its long horizon
            assertThat(a.tryAcquireAll(quiet, routine(quiet, "d", 1)).size()).isEqualTo(1);
            assertThat(a.routineHorizonShort(quiet)).isFalse();
        }
    }

    @Test
    void an_urgent_grant_holds_the_routine_candidates_after_it_in_the_same_call_and_the_memory_ends() {
        String r = bot + "-same-call";
        Duration memory = Duration.ofMillis(600);
        try (RedisGcraBudget b = new RedisGcraBudget(redis.url(), twoHorizons(memory), Duration.ofSeconds(2))) {
            List<BudgetRequest> batch = new java.util.ArrayList<>();
            batch.add(BudgetRequest.live(r, "u").reservingUpTo(Duration.ofMillis(500)).asUrgent());
            batch.addAll(routine(r, "c", 5));
            List<Decision> d = b.tryAcquireAll(r, batch);
            assertThat(d.get(0).granted()).isTrue();
            assertThat(d.get(0).isReservation()).isFalse();
            assertThat(reservations(d)).as("the routine ones after it: one slot within 100 ms").isEqualTo(1);
            assertThat(b.routineHorizonShort(r)).isTrue();
            long stamped = System.nanoTime();
            // the memory runs out on Redis' clock: wait for the answer to change, bounded
            long deadline = stamped + Duration.ofSeconds(5).toNanos();
            int i = 0;
            while (b.routineHorizonShort(r) && System.nanoTime() < deadline) {
                b.tryAcquireAll(r, routine(r, "w" + i++, 1));
                java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
            }
            long afterMs = (System.nanoTime() - stamped) / 1_000_000;
            assertThat(b.routineHorizonShort(r)).as("long horizon again after the memory").isFalse();
            assertThat(afterMs).as("not before the memory ran out").isGreaterThanOrEqualTo(memory.toMillis() - 50);
        }
    }

    @Test
    void with_a_critical_memory_of_zero_routine_requests_always_get_the_routine_horizon_and_no_key_is_written() {
        String r = bot + "-always-short";
        try (RedisGcraBudget b = new RedisGcraBudget(redis.url(), twoHorizons(Duration.ZERO), Duration.ofSeconds(2))) {
            List<Decision> d = b.tryAcquireAll(r, routine(r, "c", 5));
            assertThat(d.get(0).granted()).isTrue();
            assertThat(reservations(d)).isEqualTo(1);
            assertThat(b.routineHorizonShort(r)).isTrue();
            b.tryAcquire(BudgetRequest.live(r, "u").reservingUpTo(Duration.ofMillis(500)).asUrgent());
            assertThat(inspection.sync().exists("sluice:{" + r + "}:critical")).isZero();
        }
    }
}
