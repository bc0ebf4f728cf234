package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link BudgetPort} keeps, run against each implementation on real time (Redis
 * decides on its own server clock, so the tests cannot fake time for it).
 */
abstract class BudgetContract {

    /** A fresh budget with these limits; closed by the test. */
    protected abstract BudgetPort budget(BudgetLimits limits);

    /** A bot id no other test uses, so state in a shared store cannot leak between tests. */
    protected final String bot = "bot-" + UUID.randomUUID().toString().substring(0, 8);

    /** Waits out a returned wait on the monotonic clock: that the wait suffices is what is under test. */
    static void waitFor(Duration d) {
        long deadline = System.nanoTime() + d.toNanos();
        for (long left = d.toNanos(); left > 0; left = deadline - System.nanoTime()) {
            LockSupport.parkNanos(left);
        }
    }

    @Test
    void a_fresh_chat_gets_its_burst_then_the_chat_limit_refuses_with_a_bounded_wait() {
        try (BudgetPort b = budget(new BudgetLimits(1000, 100, 1, 3))) {
            for (int i = 0; i < 3; i++) {
                assertThat(b.tryAcquire(bot, "42").granted()).as("burst message %d", i).isTrue();
            }
            Decision refused = b.tryAcquire(bot, "42");
            assertThat(refused.granted()).isFalse();
            assertThat(refused.limit()).isEqualTo(Limit.CHAT);
            assertThat(refused.retryIn()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(1000));
            assertThat(b.tryAcquire(bot, "43").granted()).as("another chat is not affected").isTrue();
        }
    }

    @Test
    void the_global_limit_refuses_across_chats() {
        try (BudgetPort b = budget(new BudgetLimits(2, 2, 100, 10))) {
            assertThat(b.tryAcquire(bot, "1").granted()).isTrue();
            assertThat(b.tryAcquire(bot, "2").granted()).isTrue();
            Decision refused = b.tryAcquire(bot, "3");
            assertThat(refused.limit()).isEqualTo(Limit.GLOBAL);
            assertThat(refused.retryIn()).isPositive().isLessThanOrEqualTo(Duration.ofMillis(500));
            assertThat(b.tryAcquire("other-" + bot, "3").granted()).as("bots are independent").isTrue();
        }
    }

    @Test
    void waiting_exactly_the_returned_wait_is_admitted() {
        // Rate 7/s does not divide a second evenly, so the wait is a rounded value every time.
        try (BudgetPort b = budget(new BudgetLimits(7, 1, 1000, 1000))) {
            int refusals = 0;
            for (int i = 0; i < 12; i++) {
                Decision d = b.tryAcquire(bot, "c" + i);
                if (!d.granted()) {
                    refusals++;
                    waitFor(d.retryIn());
                    Decision again = b.tryAcquire(bot, "c" + i);
                    assertThat(again.granted()).as("after waiting %s (attempt %d)", d.retryIn(), i).isTrue();
                }
            }
            assertThat(refusals).as("the limit was actually hit").isGreaterThanOrEqualTo(10);
        }
    }

    @Test
    void a_refusal_consumes_nothing_all_or_nothing() {
        // Chat A is refused by its own limit twice; had those refusals consumed global budget,
        // chat B would now be refused by the global burst of 2.
        try (BudgetPort b = budget(new BudgetLimits(0.5, 2, 0.1, 1))) {
            assertThat(b.tryAcquire(bot, "A").granted()).isTrue();
            assertThat(b.tryAcquire(bot, "A").limit()).isEqualTo(Limit.CHAT);
            assertThat(b.tryAcquire(bot, "A").limit()).isEqualTo(Limit.CHAT);
            assertThat(b.tryAcquire(bot, "B").granted()).isTrue();
            // Now the global limit refuses chat C; C's own budget must be untouched afterwards.
            Decision globalRefusal = b.tryAcquire(bot, "C");
            assertThat(globalRefusal.limit()).isEqualTo(Limit.GLOBAL);
        }
        try (BudgetPort b = budget(new BudgetLimits(5, 1, 0.1, 1))) {
            String bot2 = bot + "-2";
            assertThat(b.tryAcquire(bot2, "A").granted()).isTrue();
            Decision d = b.tryAcquire(bot2, "B");
            assertThat(d.limit()).isEqualTo(Limit.GLOBAL);
            waitFor(d.retryIn());
            assertThat(b.tryAcquire(bot2, "B").granted()).as("B's chat budget was not spent by the refusal").isTrue();
        }
    }

    @Test
    void a_penalty_gate_refuses_only_its_chat_until_it_lifts_and_is_never_shortened() {
        try (BudgetPort b = budget(new BudgetLimits(1000, 100, 1000, 100))) {
            b.penalizeChat(bot, "X", Duration.ofMillis(600));
            b.penalizeChat(bot, "X", Duration.ofMillis(50));
            Decision d = b.tryAcquire(bot, "X");
            assertThat(d.limit()).isEqualTo(Limit.GATE_CHAT);
            assertThat(d.retryIn()).isGreaterThan(Duration.ofMillis(400)).isLessThanOrEqualTo(Duration.ofMillis(600));
            assertThat(b.tryAcquire(bot, "Y").granted()).isTrue();
            waitFor(d.retryIn());
            assertThat(b.tryAcquire(bot, "X").granted()).isTrue();
        }
    }

    @Test
    void concurrent_callers_never_get_more_than_burst_plus_rate_times_elapsed() throws Exception {
        double rate = 40;
        int burst = 5;
        try (BudgetPort b = budget(new BudgetLimits(rate, burst, 1000, 1000))) {
            AtomicInteger granted = new AtomicInteger();
            AtomicInteger chat = new AtomicInteger();
            long start = System.nanoTime();
            long end = start + TimeUnit.MILLISECONDS.toNanos(1500);
            ExecutorService pool = Executors.newFixedThreadPool(6);
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < 6; t++) {
                    futures.add(pool.submit((Callable<Void>) () -> {
                        while (System.nanoTime() < end) {
                            Decision d = b.tryAcquire(bot, "c" + chat.incrementAndGet());
                            if (d.granted()) {
                                granted.incrementAndGet();
                            } else {
                                waitFor(d.retryIn());
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> f : futures) {
                    f.get(10, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            double elapsedS = (System.nanoTime() - start) / 1e9;
            assertThat(granted.get()).as("granted in %.3f s", elapsedS)
                    .isLessThanOrEqualTo((int) Math.floor(burst + rate * elapsedS))
                    // no false refusals: callers that wait the returned wait get close to the rate
                    .isGreaterThanOrEqualTo((int) Math.floor(burst + rate * 1.5 * 0.85));
        }
    }
}
