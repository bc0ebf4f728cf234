package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.testkit.ManualClock;
import dev.sluice.metrics.BudgetState;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.lettuce.core.RedisConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The circuit breaker and the outage modes, against a shared budget that fails on demand. */
class ResilientBudgetTest {
    private final AtomicBoolean down = new AtomicBoolean();
    private final AtomicBoolean closedUnderCall = new AtomicBoolean();
    private final AtomicInteger sharedCalls = new AtomicInteger();
    private final AtomicInteger factoryCalls = new AtomicInteger();
    private final AtomicInteger probes = new AtomicInteger();
    private final List<String> events = new ArrayList<>();
    private final BudgetListener listener = new BudgetListener() {
        @Override
        public synchronized void redisError(String kind) {
            events.add("error:" + kind);
        }

        @Override
        public synchronized void stateChanged(BudgetState state) {
            events.add("state:" + state);
        }
    };

    private final List<String> sharedWrites = new ArrayList<>();

    /** Grants everything while up; throws a connection error while down. */
    private BudgetPort shared() {
        factoryCalls.incrementAndGet();
        return new BudgetPort() {
            @Override
            public Decision tryAcquire(BudgetRequest request) {
                sharedCalls.incrementAndGet();
                if (closedUnderCall.get()) {
                    // what a thread inside a call sees when another thread's connection error closed the client
                    throw new IllegalStateException("executor not accepting a task");
                }
                if (down.get()) {
                    throw new BudgetUnavailableException("down", new RedisConnectionException("Connection refused"));
                }
                return Decision.grant();
            }

            @Override
            public void penalize(String botId, PenaltyScope scope, String chatId, Duration retryAfter) {
                tryAcquire(BudgetRequest.live(botId, chatId));
                synchronized (sharedWrites) {
                    sharedWrites.add("penalize:" + botId + ":" + scope + ":" + chatId + ":" + retryAfter.toMillis());
                }
            }

            @Override
            public void startDrained(String botId) {
                tryAcquire(BudgetRequest.live(botId, "x"));
                synchronized (sharedWrites) {
                    sharedWrites.add("drained:" + botId);
                }
            }

            @Override
            public BudgetState state() {
                return BudgetState.SHARED;
            }

            @Override
            public void probe() {
                probes.incrementAndGet();
                if (down.get()) {
                    throw new BudgetUnavailableException("down", new RedisConnectionException("Connection refused"));
                }
            }

            @Override
            public void close() {
            }
        };
    }

    private ResilientBudget budget(BudgetConfig.OutageMode mode, ManualClock clock) {
        BudgetConfig config = BudgetConfig.builder(new BudgetLimits(30, 3, 1000, 1000)).outageMode(mode)
                .maxReplicas(3).probeInterval(Duration.ofMillis(200)).circuitMinimumCalls(3).build();
        return new ResilientBudget(this::shared, config, listener, clock);
    }

    @Test
    void local_fallback_decides_at_rate_over_replicas_then_a_probe_returns_to_shared() {
        ManualClock clock = new ManualClock();
        try (ResilientBudget b = budget(BudgetConfig.OutageMode.LOCAL_FALLBACK, clock)) {
            assertThat(b.tryAcquire("bot", "1").granted()).isTrue();
            assertThat(b.state()).isEqualTo(BudgetState.SHARED);
            down.set(true);
            // the failing calls are decided by the fallback at once, drained for the first second of the outage
            // (the provider still counts every replica's shared grants; RedisStallIT): then 30/3 = 10/s, burst max(1, 3/3) = 1
            Decision drained = b.tryAcquire("bot", "2");
            assertThat(b.state()).isEqualTo(BudgetState.FALLBACK_LOCAL);
            assertThat(drained.limit()).isEqualTo(Limit.GLOBAL);
            assertThat(drained.retryIn()).isEqualTo(Duration.ofMillis(1000));
            clock.advance(Duration.ofMillis(1000));
            assertThat(b.tryAcquire("bot", "2").granted()).isTrue();
            Decision refused = b.tryAcquire("bot", "3");
            assertThat(refused.limit()).isEqualTo(Limit.GLOBAL);
            assertThat(refused.retryIn()).isEqualTo(Duration.ofMillis(100));
            b.tryAcquire("bot", "4");
            assertThat(b.circuitState()).isEqualTo(CircuitBreaker.State.OPEN);
            int callsWhenOpen = sharedCalls.get();
            clock.advance(Duration.ofMillis(100));
            assertThat(b.tryAcquire("bot", "5").granted()).isTrue();
            assertThat(sharedCalls.get()).as("an open circuit does not call Redis").isEqualTo(callsWhenOpen);

            down.set(false);
            await().atMost(Duration.ofSeconds(2)).until(() -> {
                b.tryAcquire("bot", "probe");
                return b.state() == BudgetState.SHARED;
            });
            assertThat(b.circuitState()).isEqualTo(CircuitBreaker.State.CLOSED);
            // issue 19: the client is kept through connection errors (Lettuce reconnects it), not rebuilt per error
            assertThat(factoryCalls.get()).as("one client through the connection errors").isEqualTo(1);
            assertThat(b.timeInState().get(BudgetState.FALLBACK_LOCAL)).isPositive();
            assertThat(events).contains("state:SHARED", "error:connection", "state:FALLBACK_LOCAL");
            assertThat(events.get(events.size() - 1)).isEqualTo("state:SHARED");
        }
    }

    @Test
    void a_client_closed_under_a_call_is_the_outage_not_an_error_of_the_caller() {
        ManualClock clock = new ManualClock();
        try (ResilientBudget b = budget(BudgetConfig.OutageMode.FAIL_CLOSED, clock)) {
            closedUnderCall.set(true);
            Decision d = b.tryAcquire("bot", "1");
            assertThat(d.limit()).isEqualTo(Limit.UNAVAILABLE);
            b.penalize("bot", PenaltyScope.CHAT, "1", Duration.ofSeconds(1)); // kept for replay, not thrown
            assertThat(events).contains("error:connection");
            closedUnderCall.set(false);
            await().atMost(Duration.ofSeconds(2)).until(() -> b.tryAcquire("bot", "x").granted());
        }
        ResilientBudget closed = budget(BudgetConfig.OutageMode.FAIL_CLOSED, new ManualClock());
        closed.close();
        assertThatThrownBy(() -> closed.tryAcquire("bot", "1")).as("a closed budget still says so")
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void fail_closed_refuses_with_unavailable_and_a_probe_wait_then_resumes() {
        ManualClock clock = new ManualClock();
        try (ResilientBudget b = budget(BudgetConfig.OutageMode.FAIL_CLOSED, clock)) {
            down.set(true);
            for (int i = 0; i < 5; i++) {
                Decision d = b.tryAcquire("bot", "c" + i);
                assertThat(d.limit()).isEqualTo(Limit.UNAVAILABLE);
                assertThat(d.retryIn()).isEqualTo(Duration.ofMillis(200));
            }
            assertThat(b.state()).isEqualTo(BudgetState.PAUSED);
            assertThat(b.tryAcquireAll("bot", List.of(BudgetRequest.live("bot", "a"), BudgetRequest.backfill("bot", "b"))))
                    .extracting(Decision::limit).containsExactly(Limit.UNAVAILABLE, Limit.UNAVAILABLE);
            down.set(false);
            await().atMost(Duration.ofSeconds(2)).until(() -> b.tryAcquire("bot", "x").granted());
            assertThat(b.state()).isEqualTo(BudgetState.SHARED);
            assertThat(b.timeInState().get(BudgetState.PAUSED)).isPositive();
        }
    }

    @Test
    void penalties_reach_the_fallback_even_while_redis_is_down() {
        ManualClock clock = new ManualClock();
        try (ResilientBudget b = budget(BudgetConfig.OutageMode.LOCAL_FALLBACK, clock)) {
            down.set(true);
            b.penalize("bot", PenaltyScope.BOT, "1", Duration.ofSeconds(5));
            Decision d = b.tryAcquire("bot", "2");
            assertThat(d.limit()).isEqualTo(Limit.GATE_BOT);
            assertThat(d.retryIn()).isEqualTo(Duration.ofSeconds(5));
        }
    }

    /**
     * The same fault as the global drain, for a group's minute (found looking for it after RedisStallIT): the provider
     * counts a group's calls in a sliding 60 s, the shared budget may have spent them just before Redis went (up to
     * budget.reservation.max.ms of reserved sends after), and the fallback's fresh group bucket granted at once. A
     * group's first fallback grant now comes one group interval after the last instant a shared grant could be sent:
     * the outage's start + reservation.max + 3150 ms (20/min stretched by the 3000 ms arrival margin). Private chats are
     * not held (the provider's chat burst of 3 absorbs the budget's 2).
     */
    @Test
    void a_groups_first_fallback_grant_waits_one_group_interval_after_the_last_shared_send() {
        ManualClock clock = new ManualClock();
        BudgetConfig config = BudgetConfig.builder(new BudgetLimits(30, 3, 1, 2)).maxReplicas(3)
                .reservationMax(Duration.ofMillis(500)).probeInterval(Duration.ofMillis(200)).circuitMinimumCalls(3).build();
        try (ResilientBudget b = new ResilientBudget(this::shared, config, listener, clock)) {
            assertThat(b.tryAcquire("bot", "-100").granted()).isTrue(); // shared
            down.set(true);
            assertThat(b.tryAcquire("bot", "1").limit()).as("the global drain").isEqualTo(Limit.GLOBAL);
            clock.advance(Duration.ofMillis(1000));
            assertThat(b.tryAcquire("bot", "1").granted()).as("a private chat after the drain").isTrue();
            clock.advance(Duration.ofMillis(200));
            Decision group = b.tryAcquire("bot", "-100");
            assertThat(group.limit()).isEqualTo(Limit.GROUP);
            assertThat(group.retryIn()).isEqualTo(Duration.ofMillis(500 + 3150 - 1200));
            assertThat(b.tryAcquire("bot", "-200").retryIn()).as("a group the shared budget may have served too")
                    .isEqualTo(group.retryIn());
            clock.advance(group.retryIn());
            assertThat(b.tryAcquire("bot", "-100").granted()).isTrue();
            clock.advance(Duration.ofSeconds(10));
            assertThat(b.tryAcquire("bot", "-300").granted()).as("a group first decided later: no wait").isTrue();
        }
    }

    @Test
    void redis_down_at_start_is_an_outage_not_a_crash() {
        ManualClock clock = new ManualClock();
        BudgetConfig config = BudgetConfig.builder(new BudgetLimits(30, 3, 1000, 1000)).build();
        try (ResilientBudget b = new ResilientBudget(() -> {
            throw new BudgetUnavailableException("no Redis", new RedisConnectionException("refused"));
        }, config, listener, clock)) {
            // another replica may have sent at the full shared rate until Redis went: the fallback starts drained
            Decision first = b.tryAcquire("bot", "1");
            assertThat(b.state()).isEqualTo(BudgetState.FALLBACK_LOCAL);
            assertThat(first.limit()).isEqualTo(Limit.GLOBAL);
            assertThat(first.retryIn()).isEqualTo(Duration.ofMillis(1000));
            clock.advance(Duration.ofMillis(1000));
            assertThat(b.tryAcquire("bot", "1").granted()).isTrue();
        }
    }

    @Test
    void on_resuming_the_outage_bots_start_drained_and_unshared_penalties_are_replayed_with_what_is_left() {
        ManualClock clock = new ManualClock();
        try (ResilientBudget b = budget(BudgetConfig.OutageMode.LOCAL_FALLBACK, clock)) {
            assertThat(b.tryAcquire("bot", "1").granted()).isTrue();
            down.set(true);
            b.tryAcquire("bot", "2");
            b.penalize("bot", PenaltyScope.CHAT, "9", Duration.ofSeconds(10));
            b.penalize("other", PenaltyScope.BOT, "9", Duration.ofSeconds(1));
            assertThat(sharedWrites).isEmpty();
            clock.advance(Duration.ofSeconds(4));
            down.set(false);
            await().atMost(Duration.ofSeconds(2)).until(() -> {
                b.tryAcquire("bot", "probe");
                return b.state() == BudgetState.SHARED;
            });
            // "other"'s 1 s penalty is over: nothing left to replay; the chat gate has 6 s left
            assertThat(sharedWrites).containsExactlyInAnyOrder("drained:bot", "drained:other",
                    "penalize:bot:CHAT:9:6000");
            b.tryAcquire("bot", "again");
            assertThat(sharedWrites).as("resumed once").hasSize(3);
        }
    }

    /**
     * Sessions 21-22: a sender with nothing to send stayed FALLBACK_LOCAL after Redis came back, until its next message
     * (its status and metrics said so the whole time), and the outage's drained starts and penalties waited for that
     * message too. The probe (the sender's status thread calls it every probe interval) asks Redis without a decision.
     */
    @Test
    void an_idle_budget_learns_from_its_probe_that_redis_is_back_and_replays_the_outage_then() {
        ManualClock clock = new ManualClock();
        try (ResilientBudget b = budget(BudgetConfig.OutageMode.LOCAL_FALLBACK, clock)) {
            assertThat(b.tryAcquire("bot", "1").granted()).isTrue();
            b.probe();
            assertThat(probes.get()).as("shared: the decisions are the probe, none of its own").isZero();
            down.set(true);
            b.tryAcquire("bot", "2");
            b.penalize("bot", PenaltyScope.CHAT, "9", Duration.ofSeconds(10));
            assertThat(b.state()).isEqualTo(BudgetState.FALLBACK_LOCAL);
            b.probe(); // Redis still down: recorded on the breaker, nothing thrown, still the fallback
            assertThat(b.state()).isEqualTo(BudgetState.FALLBACK_LOCAL);
            int decisions = sharedCalls.get();
            clock.advance(Duration.ofSeconds(4));
            down.set(false);
            await().atMost(Duration.ofSeconds(2)).until(() -> {
                b.probe(); // no message: only the probe asks Redis
                return b.state() == BudgetState.SHARED;
            });
            assertThat(b.circuitState()).isEqualTo(CircuitBreaker.State.CLOSED);
            assertThat(sharedWrites).as("the outage's drained start and what is left of its penalty, before SHARED")
                    .containsExactlyInAnyOrder("drained:bot", "penalize:bot:CHAT:9:6000");
            assertThat(sharedCalls.get() - decisions).as("the resume's two writes, no decision").isEqualTo(2);
            assertThat(events.get(events.size() - 1)).isEqualTo("state:SHARED");
            int probesWhenShared = probes.get();
            b.probe();
            assertThat(probes.get()).isEqualTo(probesWhenShared);
        }
    }

    @Test
    void a_drained_start_asked_of_the_stack_reaches_redis_now_or_when_shared_mode_resumes() {
        ManualClock clock = new ManualClock();
        try (ResilientBudget b = budget(BudgetConfig.OutageMode.LOCAL_FALLBACK, clock)) {
            b.startDrained("now");
            assertThat(sharedWrites).containsExactly("drained:now");
            down.set(true);
            b.tryAcquire("bot", "1");
            b.startDrained("later");
            assertThat(sharedWrites).containsExactly("drained:now");
            down.set(false);
            await().atMost(Duration.ofSeconds(2)).until(() -> {
                b.tryAcquire("bot", "probe");
                return b.state() == BudgetState.SHARED;
            });
            assertThat(sharedWrites).containsExactlyInAnyOrder("drained:now", "drained:bot", "drained:later");
        }
    }

    @Test
    void a_client_that_cannot_connect_is_rebuilt_every_probe_but_logged_at_warn_once_a_minute() {
        ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(ResilientBudget.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> appender = new ch.qos.logback.core.read.ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        ManualClock clock = new ManualClock();
        BudgetConfig config = BudgetConfig.builder(new BudgetLimits(30, 3, 1000, 1000))
                .probeInterval(Duration.ofMillis(50)).build();
        try (ResilientBudget b = new ResilientBudget(() -> {
            factoryCalls.incrementAndGet();
            throw new BudgetUnavailableException("no Redis", new RedisConnectionException("refused"));
        }, config, listener, clock)) {
            // the probe rebuilds the client once a probe interval (real time: the circuit's wait in OPEN)
            await().atMost(Duration.ofSeconds(5)).until(() -> {
                b.tryAcquire("bot", "1");
                return factoryCalls.get() >= 6;
            });
            assertThat(rebuildWarnings(appender)).as("the first rebuild at WARN, the next ones within a minute at DEBUG")
                    .containsExactly("budget: building Redis client #2 (the last one could not connect or was closed)");
            clock.advance(Duration.ofMillis(ResilientBudget.REBUILD_WARN_INTERVAL_MS));
            int before = factoryCalls.get();
            await().atMost(Duration.ofSeconds(5)).until(() -> {
                b.tryAcquire("bot", "1");
                return factoryCalls.get() > before;
            });
            List<String> warnings = rebuildWarnings(appender);
            assertThat(warnings).hasSize(2);
            assertThat(warnings.get(1)).matches("budget: building Redis client #\\d+ \\(the last one could not connect or was"
                    + " closed\\) \\(\\d+ more like it in the last 60 s, at DEBUG\\)");
            int atDebug = Integer.parseInt(warnings.get(1).replaceAll(".*closed\\) \\((\\d+) more.*", "$1"));
            int second = Integer.parseInt(warnings.get(1).replaceAll(".*client #(\\d+) .*", "$1"));
            assertThat(atDebug).as("every rebuild between the two WARN lines counted").isEqualTo(second - 3);
        } finally {
            logger.detachAppender(appender);
        }
    }

    private static List<String> rebuildWarnings(ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> appender) {
        synchronized (appender.list) {
            return appender.list.stream().filter(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN)
                    .map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
                    .filter(m -> m.startsWith("budget: building Redis client")).toList();
        }
    }
}
