package dev.sluice.sender.budget.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.testkit.ManualClock;
import dev.sluice.config.ConfigException;
import dev.sluice.config.Settings;
import dev.sluice.sender.budget.BudgetLimits;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.Limit;
import dev.sluice.sender.budget.LocalGcraBudget;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** BudgetClient's waiting rules on a manual clock: sleeps exactly the returned waits, gives up at the deadline. */
class BudgetClientTest {
    private final ManualClock clock = new ManualClock();
    private final List<Duration> sleeps = new ArrayList<>();
    private final Sleeper sleeper = d -> {
        sleeps.add(d);
        clock.advance(d);
    };

    private BudgetClient client(BudgetLimits limits) {
        return BudgetClient.builder().budget(new LocalGcraBudget(limits, clock)).clock(clock).sleeper(sleeper).build();
    }

    @Test
    void acquire_sleeps_exactly_the_returned_wait_once_per_refusal() throws Exception {
        try (BudgetClient c = client(new BudgetLimits(10, 1, 1000, 1000))) {
            assertThat(c.acquire("backfill", Duration.ofSeconds(1))).isEqualTo(new Grant(Duration.ZERO, 1));
            Grant second = c.acquire("backfill", Duration.ofSeconds(1));
            assertThat(second.attempts()).isEqualTo(2);
            assertThat(second.waited()).isEqualTo(Duration.ofMillis(100));
            assertThat(sleeps).containsExactly(Duration.ofMillis(100));
        }
    }

    @Test
    void acquire_gives_up_at_once_when_the_wait_ends_after_the_deadline_and_consumes_nothing() throws Exception {
        try (BudgetClient c = client(new BudgetLimits(10, 1, 1000, 1000))) {
            c.acquire("backfill", Duration.ZERO);
            assertThatThrownBy(() -> c.acquire("backfill", Duration.ofMillis(50)))
                    .isInstanceOfSatisfying(BudgetDeadlineException.class, e -> {
                        assertThat(e.limit()).isEqualTo(Limit.GLOBAL);
                        assertThat(e.retryIn()).isEqualTo(Duration.ofMillis(100));
                        assertThat(e.waited()).isZero();
                        assertThat(e.attempts()).isEqualTo(1);
                        assertThat(e.key()).isEqualTo("backfill");
                    })
                    .hasMessageContaining("'backfill'").hasMessageContaining("GLOBAL");
            assertThat(sleeps).as("no pointless sleep").isEmpty();
            clock.advance(Duration.ofMillis(100));
            assertThat(c.tryAcquire("backfill").granted()).as("the refusal consumed nothing").isTrue();
        }
    }

    @Test
    void try_acquire_never_waits_and_returns_the_wait() {
        try (BudgetClient c = client(new BudgetLimits(4, 2, 1000, 1000))) {
            assertThat(c.tryAcquire("k").granted()).isTrue();
            assertThat(c.tryAcquire("k").granted()).isTrue();
            Decision d = c.tryAcquire("k");
            assertThat(d.granted()).isFalse();
            assertThat(d.retryIn()).isEqualTo(Duration.ofMillis(250));
            assertThat(sleeps).isEmpty();
        }
    }

    @Test
    void key_only_requests_are_not_limited_per_chat_but_chat_requests_are() {
        try (BudgetClient c = client(new BudgetLimits(1000, 100, 1, 1))) {
            for (int i = 0; i < 20; i++) {
                assertThat(c.tryAcquire("k").granted()).isTrue();
            }
            assertThat(c.tryAcquire("k", "42").granted()).isTrue();
            Decision d = c.tryAcquire("k", "42");
            assertThat(d.limit()).isEqualTo(Limit.CHAT);
            assertThat(d.retryIn()).isEqualTo(Duration.ofSeconds(1));
        }
    }

    @Test
    void acquire_async_schedules_each_retry_at_the_returned_wait() throws Exception {
        try (BudgetClient c = BudgetClient.builder().budget(new LocalGcraBudget(new BudgetLimits(20, 1, 1000, 1000)))
                .clock(Clock.systemUTC()).build()) {
            long start = System.nanoTime();
            List<CompletableFuture<Grant>> grants = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                grants.add(c.acquireAsync("k", null, Duration.ofSeconds(2)));
            }
            for (CompletableFuture<Grant> g : grants) {
                g.get(5, TimeUnit.SECONDS);
            }
            long elapsedMs = (System.nanoTime() - start) / 1_000_000;
            assertThat(elapsedMs).as("4 grants at 20/s, burst 1").isGreaterThanOrEqualTo(145);
            assertThat(grants.stream().mapToInt(g -> g.join().attempts()).max().orElseThrow())
                    .as("never a polling loop: few attempts each").isLessThanOrEqualTo(4);
            // a wait certainly beyond the deadline: a gate of 10 s (the next global slot, 50 ms away, was a race on
            // a loaded host)
            c.penalize("k", dev.sluice.sender.budget.PenaltyScope.CHAT, "gated", Duration.ofSeconds(10));
            CompletableFuture<Grant> tooLate = c.acquireAsync("k", "gated", Duration.ZERO);
            assertThatThrownBy(() -> tooLate.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(BudgetDeadlineException.class);
        }
    }

    @Test
    void a_shared_bot_penalty_refuses_every_caller_of_the_key_until_it_lifts() {
        try (BudgetClient c = client(new BudgetLimits(1000, 100, 1000, 100))) {
            c.penalize("k", dev.sluice.sender.budget.PenaltyScope.BOT, null, Duration.ofSeconds(10));
            Decision d = c.tryAcquire("k", "5");
            assertThat(d.limit()).isEqualTo(Limit.GATE_BOT);
            assertThat(d.retryIn()).isEqualTo(Duration.ofSeconds(10));
            clock.advance(Duration.ofSeconds(10));
            assertThat(c.tryAcquire("k").granted()).isTrue();
        }
    }

    @Test
    void invalid_arguments_name_the_field() {
        try (BudgetClient c = client(BudgetLimits.telegramDefaults())) {
            assertThatThrownBy(() -> c.tryAcquire("bad{key}")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("bad{key}");
            assertThatThrownBy(() -> c.acquire("k", Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("deadline");
            assertThatThrownBy(() -> c.penalize("k", dev.sluice.sender.budget.PenaltyScope.CHAT, null, Duration.ofSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("chatId");
            assertThatThrownBy(() -> c.penalize("k", dev.sluice.sender.budget.PenaltyScope.BOT, null, Duration.ZERO))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retryAfter");
        }
    }

    @Test
    void from_settings_needs_a_redis_url_and_names_bad_keys() {
        assertThatThrownBy(() -> BudgetClient.fromSettings(Settings.of(Map.of())))
                .isInstanceOf(ConfigException.class).hasMessageContaining("redis.url");
        assertThatThrownBy(() -> BudgetClient.fromSettings(Settings.of(Map.of("redis.url", "http://x"))))
                .isInstanceOf(ConfigException.class).hasMessageContaining("redis.url");
        assertThatThrownBy(() -> BudgetClient.fromSettings(Settings.of(Map.of("redis.url", "redis://127.0.0.1:1",
                "budget.client.lane", "sideways")))).isInstanceOf(ConfigException.class).hasMessageContaining("budget.client.lane");
    }
}
