package dev.sluice.sender.budget.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetLimits;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.Limit;
import dev.sluice.sender.budget.ResilientBudget;
import dev.sluice.sender.budget.LimitKeyBudget;
import dev.sluice.sender.idempotency.RedisSentMarks;
import dev.sluice.sender.budget.quota.PostgresQuota;
import dev.sluice.sender.budget.quota.QuotaBudget;
import dev.sluice.sender.budget.quota.QuotaConfig;
import dev.sluice.testkit.PostgresInstance;
import dev.sluice.testkit.PostgresLauncher;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 15 item 3 (finding F7): the budget of a sender that has an HTTP provider configured and runs in quota
 * mode is the Redis budget wrapped in every decorator ({@code LimitKeyBudget} over {@code QuotaBudget} over
 * {@code ResilientBudget}). For a Telegram bot in that process, with or without a quota of its own,
 * reservations, the arrival guard, the folded sent-mark check and the Redis round-trip count must work as they
 * do on the bare Redis budget. Real redis-server and PostgreSQL (skipped with the reason when PostgreSQL is
 * absent).
 */
class BudgetStackIT {
    private static RedisInstance redis;
    private static PostgresInstance pg;

    /** A Telegram bot without a quota, one with a quota, and an HTTP provider deciding under its limit key. */
    private final String tag = UUID.randomUUID().toString().substring(0, 8);
    private final String telegram = "tg-" + tag;
    private final String telegramWithQuota = "tgq-" + tag;
    private final String provider = "sms-" + tag;
    private final String providerKey = "ext:sms-" + tag;

    @BeforeAll
    static void start() {
        PostgresLauncher.unavailableReason().ifPresent(reason -> assumeTrue(false, reason));
        redis = RedisLauncher.start();
        pg = PostgresLauncher.start();
    }

    @AfterAll
    static void stop() {
        if (redis != null) {
            redis.close();
        }
        if (pg != null) {
            pg.close();
        }
    }

    /** The stack a sender builds with {@code provider.<id>.*} and {@code quota.jdbc.url} set. */
    private BudgetPort stack(BudgetConfig config) {
        QuotaConfig quota = QuotaConfig.builder(pg.jdbcUrl()).credentials(PostgresInstance.USER, null)
                .limit(telegramWithQuota, 1_000, Duration.ofDays(1)).limit(providerKey, 1_000, Duration.ofDays(1))
                .leaseSize(1).build();
        return BudgetStack.of(config).redis(redis.url(), Duration.ofSeconds(2)).quota(Optional.of(quota))
                .limitKeys(Map.of(provider, providerKey)).build();
    }

    private List<String> telegramBots() {
        return List.of(telegram, telegramWithQuota);
    }

    @Test
    void the_stack_says_it_reserves_and_reads_the_sent_marks_of_the_budget_redis() {
        try (BudgetPort b = stack(BudgetConfig.of(new BudgetLimits(10, 1, 1000, 1000)))) {
            assertThat(b.reserves()).as("reservations (DeliveryProcessor turns them off when false)").isTrue();
            assertThat(b.sentMarksRedisUrl()).as("folded sent-mark check").isEqualTo(Optional.of(redis.url()));
        }
    }

    @Test
    void a_telegram_bot_takes_the_next_global_slots_as_reservations_with_or_without_a_quota() {
        try (BudgetPort b = stack(BudgetConfig.of(new BudgetLimits(10, 1, 1000, 1000)))) {
            for (String bot : telegramBots()) {
                List<Decision> d = b.tryAcquireAll(bot, reservingBatch(bot, 4));
                assertThat(d.get(0).granted()).as(bot).isTrue();
                assertThat(d.get(0).isReservation()).as(bot).isFalse();
                for (int i = 1; i <= 3; i++) {
                    // 10/s: the next free slots, 100 ms apart
                    assertThat(d.get(i).isReservation()).as("%s candidate %d", bot, i).isTrue();
                    assertThat(d.get(i).retryIn().toMillis()).as("%s candidate %d", bot, i).isBetween(100L * i - 20, 100L * i);
                }
            }
        }
    }

    @Test
    void a_provider_keeps_its_reservations_under_its_limit_key() {
        try (BudgetPort b = stack(BudgetConfig.of(new BudgetLimits(10, 1, 1000, 1000)))) {
            List<Decision> d = b.tryAcquireAll(provider, reservingBatch(provider, 3));
            assertThat(d.get(0).granted()).isTrue();
            assertThat(d.get(1).isReservation()).isTrue();
            assertThat(d.get(2).isReservation()).isTrue();
            // the same key: an outside caller of the limit key sees the slots taken
            assertThat(b.tryAcquire(BudgetRequest.live(providerKey, "other")).retryIn().toMillis()).isBetween(150L, 300L);
        }
    }

    @Test
    void a_late_answer_of_a_telegram_bot_holds_back_its_nth_grant_after_it() {
        BudgetConfig guarded = BudgetConfig.builder(new BudgetLimits(3, 100, 1000, 100)).arrivalGuardLimitPerS(3).build();
        try (BudgetPort b = stack(guarded)) {
            for (String bot : telegramBots()) {
                long late = b.tryAcquire(bot, "1").grantSeq();
                assertThat(late).as("%s: grants are numbered", bot).isPositive();
                b.reportLateAnswer(bot, late);
                assertThat(b.tryAcquire(bot, "2").grantSeq()).as(bot).isEqualTo(late + 1);
                assertThat(b.tryAcquire(bot, "3").grantSeq()).as(bot).isEqualTo(late + 2);
                Decision held = b.tryAcquire(bot, "4");
                assertThat(held.limit()).as("%s: the 4th call in the late answer's second", bot).isEqualTo(Limit.GLOBAL);
                assertThat(held.retryIn()).as(bot).isGreaterThan(Duration.ofMillis(700)).isLessThanOrEqualTo(Duration.ofSeconds(1));
            }
        }
    }

    @Test
    void a_late_answer_of_a_provider_is_reported_under_its_limit_key() {
        BudgetConfig guarded = BudgetConfig.builder(new BudgetLimits(2, 100, 1000, 100)).arrivalGuardLimitPerS(2).build();
        try (BudgetPort b = stack(guarded)) {
            long late = b.tryAcquire(provider, "1").grantSeq();
            assertThat(late).isPositive();
            b.reportLateAnswer(provider, late);
            assertThat(b.tryAcquire(provider, "2").granted()).isTrue();
            assertThat(b.tryAcquire(providerKey, "3").limit()).as("the key's floor, set through the provider id")
                    .isEqualTo(Limit.GLOBAL);
        }
    }

    @Test
    void a_telegram_bot_reads_its_sent_marks_in_the_decision_in_one_redis_round_trip() {
        try (BudgetPort b = stack(BudgetConfig.of(new BudgetLimits(1000, 100, 1000, 100)));
             RedisSentMarks marks = new RedisSentMarks(redis.url(), Duration.ofMinutes(5), Duration.ofSeconds(2))) {
            for (String bot : telegramBots()) {
                marks.markSent(bot, "m-1", "DELIVERED", 42L); // what the sender writes after the provider's 200
                long before = b.redisRoundTrips();
                List<Decision> d = b.tryAcquireAll(bot, List.of(
                        BudgetRequest.live(bot, "9").checkingSentMark("m-1"),
                        BudgetRequest.live(bot, "10").checkingSentMark("m-2")));
                assertThat(b.redisRoundTrips() - before).as("%s: one EVALSHA for the decisions and the marks", bot)
                        .isEqualTo(1);
                assertThat(d.get(0).limit()).as(bot).isEqualTo(Limit.ALREADY_SENT);
                assertThat(d.get(0).sentMark()).as(bot).startsWith("SENT|DELIVERED|42|");
                assertThat(d.get(1).granted()).as(bot).isTrue();
                assertThat(d.get(1).sentMarkChecked()).as("%s: read and absent", bot).isTrue();
            }
        }
    }

    @Test
    void a_provider_mark_is_never_looked_up_under_its_limit_key() {
        // Provider marks live under sluice:{<provider id>}:sent:*, its budget under sluice:{<limit key>}: the script
        // cannot read them in the same (one hash tag) call, so the decision says it did not, and the sender reads
        // the mark itself.
        try (BudgetPort b = stack(BudgetConfig.of(new BudgetLimits(1000, 100, 1000, 100)));
             RedisSentMarks marks = new RedisSentMarks(redis.url(), Duration.ofMinutes(5), Duration.ofSeconds(2))) {
            marks.markSent(provider, "m-1", "DELIVERED", 7L);
            Decision d = b.tryAcquire(BudgetRequest.live(provider, "9").checkingSentMark("m-1"));
            assertThat(d.sentMarkChecked()).isFalse();
            assertThat(d.granted()).isTrue();
        }
    }

    @Test
    void every_redis_call_of_the_stack_is_counted() {
        try (BudgetPort b = stack(BudgetConfig.of(new BudgetLimits(1000, 100, 1000, 100)))) {
            long before = b.redisRoundTrips();
            b.tryAcquire(telegram, "1");
            b.tryAcquireAll(telegramWithQuota, List.of(BudgetRequest.live(telegramWithQuota, "1"),
                    BudgetRequest.live(telegramWithQuota, "2")));
            b.tryAcquire(provider, "1");
            b.penalizeChat(telegram, "2", Duration.ofSeconds(1));
            assertThat(b.redisRoundTrips() - before).as("three decisions and a penalty").isEqualTo(4);
        }
    }

    private static List<BudgetRequest> reservingBatch(String bot, int n) {
        List<BudgetRequest> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            batch.add(BudgetRequest.live(bot, "c" + i).reservingUpTo(Duration.ofMillis(500)));
        }
        return batch;
    }
}
