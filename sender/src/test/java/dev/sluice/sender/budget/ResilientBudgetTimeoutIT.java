package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.metrics.BudgetState;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 19: a budget call that times out on a healthy connection (a busy redis-server, here paused with
 * {@code CLIENT PAUSE}) is decided by the outage mode, and the Redis connection is kept: no new connection is opened
 * (counted by redis-server itself, {@code total_connections_received}, and by the budget's client factory). A broken
 * connection ({@code CLIENT KILL}, repeated so calls meet it disconnected) is reconnected by Lettuce itself: no new
 * client. When the server is really gone, the budget still leaves SHARED and comes back once the server is back.
 */
class ResilientBudgetTimeoutIT {
    private static final String BOT = "timeout-bot";

    private final List<BudgetState> states = new ArrayList<>();
    private final AtomicInteger timeouts = new AtomicInteger();
    private final AtomicInteger connectionErrors = new AtomicInteger();
    private final BudgetListener listener = new BudgetListener() {
        @Override
        public void redisError(String kind) {
            if (kind.equals("timeout")) {
                timeouts.incrementAndGet();
            } else if (kind.equals("connection")) {
                connectionErrors.incrementAndGet();
            }
        }

        @Override
        public synchronized void stateChanged(BudgetState state) {
            states.add(state);
        }
    };

    private static long connectionsReceived(RedisCommands<String, String> admin) {
        return Long.parseLong(dev.sluice.sender.redis.RedisSession.fieldOf(admin.info("stats"), "total_connections_received")
                .orElseThrow());
    }

    private final AtomicInteger clientsBuilt = new AtomicInteger();

    /** The budget on {@code redis}, counting the Redis budget clients (each a new Lettuce client and connection) built. */
    private ResilientBudget budget(RedisInstance redis, BudgetConfig config) {
        return new ResilientBudget(() -> {
            clientsBuilt.incrementAndGet();
            return new RedisGcraBudget(redis.url(), config, Duration.ofMillis(150));
        }, config, listener, Clock.systemUTC());
    }

    /** What a test does with the budget (connected, SHARED) and an admin connection to the same redis-server. */
    private interface WithAdmin {
        void run(ResilientBudget budget, RedisCommands<String, String> admin) throws Exception;
    }

    /** A fresh redis-server, the counted budget on it (first call granted) and an admin connection, for {@code test}. */
    private void withBudgetAndAdmin(WithAdmin test) throws Exception {
        withBudgetAndAdmin(BudgetConfig.OutageMode.LOCAL_FALLBACK, test);
    }

    /** As {@link #withBudgetAndAdmin(WithAdmin)}, with the given outage mode. */
    private void withBudgetAndAdmin(BudgetConfig.OutageMode outageMode, WithAdmin test) throws Exception {
        BudgetConfig config = BudgetConfig.builder(new BudgetLimits(1_000_000, 1_000_000, 1_000_000, 1_000_000))
                .probeInterval(Duration.ofMillis(100)).circuitMinimumCalls(1).outageMode(outageMode).build();
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             ResilientBudget budget = budget(redis, config)) {
            RedisClient adminClient = RedisClient.create(redis.url());
            try (StatefulRedisConnection<String, String> adminConnection = adminClient.connect()) {
                RedisCommands<String, String> admin = adminConnection.sync();
                assertThat(budget.tryAcquire(BOT, "1").granted()).isTrue(); // connected (lazily) and SHARED
                test.run(budget, admin);
            } finally {
                adminClient.shutdown();
            }
        }
    }

    /** {@code threads} sending threads deciding for distinct chats until stopped. */
    private static final class Callers implements AutoCloseable {
        final AtomicBoolean stop = new AtomicBoolean();
        final List<Thread> threads = new ArrayList<>();
        final AtomicInteger decided = new AtomicInteger();

        Callers(ResilientBudget budget, int n) {
            for (int t = 0; t < n; t++) {
                int id = t;
                Thread th = new Thread(() -> {
                    for (int i = 0; !stop.get(); i++) {
                        budget.tryAcquire(BOT, id + "-" + i);
                        decided.incrementAndGet();
                    }
                }, "caller-" + t);
                th.start();
                threads.add(th);
            }
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            for (Thread t : threads) {
                t.join(10_000);
            }
        }
    }

    @Test
    void a_timed_out_call_on_a_healthy_connection_keeps_the_connection() throws Exception {
        withBudgetAndAdmin((budget, admin) -> {
            long before = connectionsReceived(admin);
            try (Callers callers = new Callers(budget, 8)) {
                for (int round = 0; round < 3; round++) {
                    int timeoutsBefore = timeouts.get();
                    admin.clientPause(600); // the server answers nobody for 600 ms: calls time out
                    await().atMost(Duration.ofSeconds(5)).until(() -> timeouts.get() > timeoutsBefore
                            && budget.state() == BudgetState.FALLBACK_LOCAL);
                    await().atMost(Duration.ofSeconds(5)).until(() -> budget.state() == BudgetState.SHARED);
                }
            }
            assertThat(clientsBuilt.get()).as("Redis budget clients built while calls timed out on a healthy "
                    + "connection").isEqualTo(1);
            assertThat(connectionsReceived(admin) - before)
                    .as("connections redis-server accepted while calls timed out on a healthy connection").isZero();
        });
    }

    @Test
    void a_broken_connection_is_reconnected_by_lettuce_not_rebuilt() throws Exception {
        withBudgetAndAdmin((budget, admin) -> {
            try (Callers callers = new Callers(budget, 8)) {
                for (int round = 0; round < 3; round++) {
                    int errorsBefore = connectionErrors.get();
                    // every normal client but this one, again and again for 300 ms: the budget's connection
                    // breaks under its callers and calls meet it while Lettuce reconnects (commands are rejected
                    // while disconnected), as on a flaky network
                    long until = System.nanoTime() + 300_000_000L;
                    while (System.nanoTime() < until) {
                        admin.clientKill(io.lettuce.core.KillArgs.Builder.typeNormal().skipme());
                        Thread.sleep(2);
                    }
                    await().atMost(Duration.ofSeconds(5)).until(() -> connectionErrors.get() > errorsBefore);
                    int decided = callers.decided.get();
                    await().atMost(Duration.ofSeconds(10)).until(() -> budget.state() == BudgetState.SHARED
                            && callers.decided.get() > decided + 100);
                }
            }
            assertThat(clientsBuilt.get()).as("Redis budget clients built: Lettuce reconnects its own connection")
                    .isEqualTo(1);
        });
    }

    /**
     * A server that answers PING but refuses what a decision does (at maxmemory with noeviction every script that may
     * write is refused with OOM; so are a paused server's writes, a replica's after a failover, a primary short of its
     * min-replicas): the idle probe does not take the budget back to SHARED while it lasts (suspected in session 24: the
     * probe itself is a PING). It holds because the first shared call after an outage drains the bots decided in it (a
     * script that writes), and that call fails like a decision; once the server runs scripts again the budget is
     * SHARED and the bot decided in the outage starts drained.
     */
    @Test
    void a_server_that_answers_ping_but_refuses_scripts_is_not_shared_until_it_runs_them() throws Exception {
        withBudgetAndAdmin(BudgetConfig.OutageMode.FAIL_CLOSED, (budget, admin) -> {
            admin.configSet("maxmemory-policy", "noeviction");
            admin.configSet("maxmemory", "1");
            assertThat(admin.ping()).isEqualTo("PONG");
            await().atMost(Duration.ofSeconds(5)).until(() -> {
                budget.tryAcquire(BOT, "oom");
                return budget.state() == BudgetState.PAUSED;
            });
            synchronized (listener) {
                states.clear();
            }
            // idle: only the probe talks to Redis, for 15 probe intervals
            long until = System.nanoTime() + Duration.ofMillis(1500).toNanos();
            while (System.nanoTime() < until) {
                budget.probe();
                assertThat(budget.state()).as("the budget after a probe of a server refusing scripts").isEqualTo(BudgetState.PAUSED);
                Thread.sleep(20);
            }
            synchronized (listener) {
                assertThat(states).as("state changes while the server refused scripts").isEmpty();
            }
            admin.configSet("maxmemory", "0");
            await().atMost(Duration.ofSeconds(5)).until(() -> {
                budget.probe();
                return budget.state() == BudgetState.SHARED;
            });
            assertThat(budget.tryAcquire(BOT, "after").limit()).as("the bot decided in the outage starts drained")
                    .isEqualTo(Limit.GLOBAL);
            assertThat(budget.tryAcquire("other-bot", "after").granted()).isTrue();
        });
    }

    @Test
    void a_server_that_is_really_gone_still_takes_the_budget_out_of_shared_and_back() {
        BudgetConfig config = BudgetConfig.builder(new BudgetLimits(1000, 1000, 1000, 1000))
                .probeInterval(Duration.ofMillis(100)).circuitMinimumCalls(1).build();
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             ResilientBudget budget = ResilientBudget.connect(redis.url(), config, Duration.ofMillis(150), listener,
                     Clock.systemUTC())) {
            assertThat(budget.tryAcquire(BOT, "1").granted()).isTrue();
            redis.stop();
            await().atMost(Duration.ofSeconds(5)).until(() -> {
                budget.tryAcquire(BOT, "down");
                return budget.state() == BudgetState.FALLBACK_LOCAL;
            });
            redis.restart();
            await().atMost(Duration.ofSeconds(15)).until(() -> {
                budget.tryAcquire(BOT, "back");
                return budget.state() == BudgetState.SHARED;
            });
        }
    }
}
