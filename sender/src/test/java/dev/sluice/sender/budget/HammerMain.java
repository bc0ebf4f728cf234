package dev.sluice.sender.budget;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A child JVM of {@link BudgetHammerIT}: {@code threads} threads ask one bot's shared budget for messages to
 * ever new chats for {@code durationMs} from the start instant (epoch ms) the parent writes to stdin after
 * every child printed {@code READY}; a refused thread waits exactly the returned
 * wait. The budget's client clock is offset by {@code clockOffsetMs} (the script must ignore it). Prints
 * {@code RESULT granted=<n> refused=<n> firstSent=<ms> firstDone=<ms> lastSent=<ms> lastDone=<ms> ...} on stdout:
 * for the first and the last grant, the epoch ms just before the call and just after its answer, so the parent
 * can bracket the instant Redis decided (a loaded machine may stall a thread between the two).
 *
 * <p>Args: redisUrl botId ratePerS burst threads durationMs clockOffsetMs
 */
public final class HammerMain {
    private HammerMain() {
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String bot = args[1];
        double rate = Double.parseDouble(args[2]);
        int burst = Integer.parseInt(args[3]);
        int threads = Integer.parseInt(args[4]);
        long durationMs = Long.parseLong(args[5]);
        long offsetMs = Long.parseLong(args[6]);
        Clock skewed = Clock.offset(Clock.systemUTC(), Duration.ofMillis(offsetMs));
        BudgetConfig config = BudgetConfig.builder(new BudgetLimits(rate, burst, 1000, 1000))
                .outageMode(BudgetConfig.OutageMode.FAIL_CLOSED).build(); // a Redis failure shows as UNAVAILABLE
        AtomicInteger granted = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        AtomicLong firstSent = new AtomicLong(Long.MAX_VALUE);
        AtomicLong firstDone = new AtomicLong(Long.MAX_VALUE);
        AtomicLong lastSent = new AtomicLong(Long.MIN_VALUE);
        AtomicLong lastDone = new AtomicLong(Long.MIN_VALUE);
        AtomicInteger errors = new AtomicInteger();
        try (ResilientBudget budget = ResilientBudget.connect(url, config, Duration.ofSeconds(2), BudgetListener.NONE, skewed)) {
            budget.tryAcquire("warm-" + bot, "0"); // connects, loads the script, warms the code path
            System.out.println("READY");
            System.out.flush();
            // the parent answers with the common start instant once every child is ready
            long startAt = Long.parseLong(new java.io.BufferedReader(
                    new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8)).readLine().trim());
            CountDownLatch done = new CountDownLatch(threads);
            long pid = ProcessHandle.current().pid();
            for (int t = 0; t < threads; t++) {
                int me = t;
                Thread th = new Thread(() -> {
                    try {
                        long wait = startAt - System.currentTimeMillis();
                        if (wait > 0) {
                            LockSupport.parkNanos(Duration.ofMillis(wait).toNanos());
                        }
                        long end = startAt + durationMs;
                        int n = 0;
                        while (System.currentTimeMillis() < end) {
                            long sent = System.currentTimeMillis();
                            Decision d = budget.tryAcquire(bot, pid + "-" + me + "-" + n++);
                            if (d.limit() == Limit.UNAVAILABLE) {
                                errors.incrementAndGet();
                            }
                            if (d.granted()) {
                                long now = System.currentTimeMillis();
                                granted.incrementAndGet();
                                firstSent.accumulateAndGet(sent, Math::min);
                                firstDone.accumulateAndGet(now, Math::min);
                                lastSent.accumulateAndGet(sent, Math::max);
                                lastDone.accumulateAndGet(now, Math::max);
                            } else {
                                refused.incrementAndGet();
                                long left = end - System.currentTimeMillis();
                                LockSupport.parkNanos(Math.min(d.retryIn().toNanos(), Math.max(0, left) * 1_000_000L));
                            }
                        }
                    } finally {
                        done.countDown();
                    }
                });
                th.start();
            }
            done.await();
            System.out.println("RESULT granted=" + granted.get() + " refused=" + refused.get() + " firstSent=" + firstSent.get()
                    + " firstDone=" + firstDone.get() + " lastSent=" + lastSent.get() + " lastDone=" + lastDone.get()
                    + " state=" + budget.state() + " errors=" + errors.get());
        }
    }
}
