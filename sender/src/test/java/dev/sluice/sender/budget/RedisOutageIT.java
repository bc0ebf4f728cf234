package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.metrics.BudgetState;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * redis-server is stopped in the middle of a run of 3 senders (driver loops, each with its own
 * {@link ResilientBudget}, owning a third of the chats, sending to FakeTelegram over HTTP) and restarted a
 * few seconds later. local-fallback keeps sending within the provider's limit and loses nothing;
 * fail-closed sends nothing while Redis is down, then delivers everything; both return to shared mode by
 * themselves.
 */
class RedisOutageIT {
    private static final String BOT = "77";
    private static final String TOKEN = BOT + ":secret";
    private static final int SENDERS = 3;
    private static final int CHATS = 75;
    private static final int PER_CHAT = 2;
    /** Provider limit 20/s; the budget at 15/s leaves room for the fallback's bursts (3 replicas × burst 1). */
    private static final int PROVIDER_PER_S = 20;
    private static final double BUDGET_PER_S = 15;

    private RedisInstance redis;
    private FakeTelegram telegram;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @BeforeEach
    void start() {
        redis = RedisLauncher.localProcess().launch();
        telegram = FakeTelegram.start(FakeTelegram.Limits.telegram().withGlobalPerSecond(PROVIDER_PER_S));
    }

    @AfterEach
    void stop() {
        if (telegram != null) {
            telegram.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    private BudgetConfig config(BudgetConfig.OutageMode mode) {
        return BudgetConfig.builder(new BudgetLimits(BUDGET_PER_S, 1, 1, 1))
                .outageMode(mode).maxReplicas(SENDERS).probeInterval(Duration.ofMillis(300)).circuitMinimumCalls(3)
                .build();
    }

    @Test
    void local_fallback_stays_within_the_limit_loses_nothing_and_returns_to_shared() throws Exception {
        Run run = new Run(config(BudgetConfig.OutageMode.LOCAL_FALLBACK));
        run.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> telegram.accepted().size() >= 30);
        long down = System.currentTimeMillis();
        redis.stop();
        await().atMost(Duration.ofSeconds(5)).until(() -> run.allIn(BudgetState.FALLBACK_LOCAL));
        LockSupport.parkNanos(Duration.ofSeconds(3).toNanos()); // the outage lasts about 3 s
        long up = System.currentTimeMillis();
        redis.restart();
        run.awaitDone(Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(5)).until(() -> run.allIn(BudgetState.SHARED));

        List<FakeTelegram.Accepted> accepted = telegram.accepted();
        assertThat(accepted).hasSize(CHATS * PER_CHAT);
        Set<String> unique = new HashSet<>();
        accepted.forEach(a -> unique.add(a.chatId() + "|" + a.text()));
        assertThat(unique).as("each message exactly once").hasSize(CHATS * PER_CHAT);
        assertThat(telegram.rejected429Count()).as("no 429 at all").isZero();
        assertThat(telegram.maxBotMessagesPer(Duration.ofSeconds(1))).isLessThanOrEqualTo(PROVIDER_PER_S);
        long sentDuringOutage = accepted.stream()
                .filter(a -> a.acceptedAtMillis() > down + 500 && a.acceptedAtMillis() < up).count();
        assertThat(sentDuringOutage).as("the fallback kept sending while Redis was down").isPositive();
        for (ResilientBudget b : run.budgets) {
            assertThat(b.timeInState().get(BudgetState.FALLBACK_LOCAL)).isPositive();
            assertThat(b.timeInState().get(BudgetState.PAUSED)).isZero();
        }
        run.close();
    }

    @Test
    void fail_closed_sends_nothing_while_redis_is_down_then_everything_and_returns_to_shared() throws Exception {
        Run run = new Run(config(BudgetConfig.OutageMode.FAIL_CLOSED));
        run.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> telegram.accepted().size() >= 30);
        redis.stop();
        long down = System.currentTimeMillis();
        await().atMost(Duration.ofSeconds(5)).until(() -> run.allIn(BudgetState.PAUSED));
        int before = telegram.accepted().size();
        LockSupport.parkNanos(Duration.ofSeconds(3).toNanos());
        assertThat(telegram.accepted()).as("nothing sent while Redis is down").hasSize(before);
        long up = System.currentTimeMillis();
        redis.restart();
        run.awaitDone(Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(5)).until(() -> run.allIn(BudgetState.SHARED));

        List<FakeTelegram.Accepted> accepted = telegram.accepted();
        assertThat(accepted).hasSize(CHATS * PER_CHAT);
        // a decision granted just before the stop may reach the provider a moment later; none after that
        assertThat(accepted.stream().filter(a -> a.acceptedAtMillis() > down + 300 && a.acceptedAtMillis() < up))
                .isEmpty();
        assertThat(telegram.rejected429Count()).isZero();
        assertThat(telegram.maxBotMessagesPer(Duration.ofSeconds(1))).isLessThanOrEqualTo(PROVIDER_PER_S);
        for (ResilientBudget b : run.budgets) {
            assertThat(b.timeInState().get(BudgetState.PAUSED)).isPositive();
        }
        run.close();
    }

    /** 3 sender loops; sender i owns the chats with index % 3 == i; per-chat FIFO; refusals rescheduled. */
    private final class Run implements AutoCloseable {
        final List<ResilientBudget> budgets = new ArrayList<>();
        final List<Thread> threads = new ArrayList<>();
        final AtomicInteger delivered = new AtomicInteger();
        final Set<String> errors = ConcurrentHashMap.newKeySet();

        Run(BudgetConfig config) {
            for (int i = 0; i < SENDERS; i++) {
                budgets.add(ResilientBudget.connect(redis.url(), config, Duration.ofMillis(200), BudgetListener.NONE,
                        Clock.systemUTC()));
            }
        }

        boolean allIn(BudgetState s) {
            return budgets.stream().allMatch(b -> b.state() == s);
        }

        void start() {
            for (int i = 0; i < SENDERS; i++) {
                int me = i;
                Thread t = new Thread(() -> loop(me), "sender-" + i);
                t.setDaemon(true);
                threads.add(t);
                t.start();
            }
        }

        private record Item(long readyAtNanos, String chat, int next) {
        }

        private void loop(int me) {
            BudgetPort budget = budgets.get(me);
            PriorityQueue<Item> ready = new PriorityQueue<>((a, b) -> Long.compare(a.readyAtNanos, b.readyAtNanos));
            long t0 = System.nanoTime();
            for (int c = me; c < CHATS; c += SENDERS) {
                ready.add(new Item(t0, Integer.toString(1000 + c), 0));
            }
            while (!ready.isEmpty() && !Thread.currentThread().isInterrupted()) {
                Item item = ready.poll();
                long sleep = item.readyAtNanos - System.nanoTime();
                if (sleep > 0) {
                    LockSupport.parkNanos(sleep);
                }
                Decision d = budget.tryAcquire(BOT, item.chat);
                if (!d.granted()) {
                    ready.add(new Item(System.nanoTime() + d.retryIn().toNanos(), item.chat, item.next));
                    continue;
                }
                int status = send(item.chat, "m" + item.next);
                if (status == 200) {
                    delivered.incrementAndGet();
                    if (item.next + 1 < PER_CHAT) {
                        ready.add(new Item(System.nanoTime(), item.chat, item.next + 1));
                    }
                } else if (status == 429) {
                    budget.penalizeChat(BOT, item.chat, Duration.ofSeconds(1));
                    ready.add(new Item(System.nanoTime() + Duration.ofSeconds(1).toNanos(), item.chat, item.next));
                } else {
                    errors.add(item.chat + ": HTTP " + status);
                    ready.add(new Item(System.nanoTime() + Duration.ofMillis(200).toNanos(), item.chat, item.next));
                }
            }
        }

        private int send(String chat, String text) {
            try {
                HttpRequest req = HttpRequest.newBuilder(URI.create(telegram.apiUrl() + TOKEN + "/sendMessage"))
                        .timeout(Duration.ofSeconds(5))
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .POST(HttpRequest.BodyPublishers.ofString("chat_id=" + chat + "&text=" + text)).build();
                return http.send(req, HttpResponse.BodyHandlers.discarding()).statusCode();
            } catch (Exception e) {
                errors.add(chat + ": " + e);
                return -1;
            }
        }

        void awaitDone(Duration max) {
            await().atMost(max).until(() -> delivered.get() == CHATS * PER_CHAT);
            assertThat(errors).isEmpty();
        }

        @Override
        public void close() throws InterruptedException {
            for (Thread t : threads) {
                t.interrupt();
                t.join(2000);
            }
            budgets.forEach(ResilientBudget::close);
        }
    }
}
