package dev.sluice.sender.http;

import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.PenaltyScope;
import dev.sluice.sender.provider.SendOutcome;
import dev.sluice.sender.provider.Transport;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * One "instance" calling a provider the way the sender does, on its own thread: ask the budget, wait the
 * refusal's retryIn, call, and on a throttle signal write the BOT penalty (shared gate + AIMD) and wait its
 * retry_after. With a null budget it is a client without Sluice, calling at a fixed rate.
 */
final class ProviderClient implements AutoCloseable {
    private final String name;
    private final BudgetPort budget;
    private final Transport transport;
    private final String providerId;
    private final int messages;
    private final double unpacedRatePerS;
    private final Thread thread;
    private volatile boolean stopped;
    final AtomicInteger delivered = new AtomicInteger();
    final AtomicInteger throttled = new AtomicInteger();
    final AtomicInteger failed = new AtomicInteger();

    private ProviderClient(String name, BudgetPort budget, Transport transport, String providerId, int messages,
                           double unpacedRatePerS) {
        this.name = name;
        this.budget = budget;
        this.transport = transport;
        this.providerId = providerId;
        this.messages = messages;
        this.unpacedRatePerS = unpacedRatePerS;
        this.thread = new Thread(this::run, "provider-client-" + name);
        this.thread.setDaemon(true);
    }

    /** Through a budget: every message until delivered (or stopped). */
    static ProviderClient throughBudget(String name, BudgetPort budget, Transport transport, String providerId,
                                        int messages) {
        return new ProviderClient(name, budget, transport, providerId, messages, 0);
    }

    /** Without Sluice: one call per message at {@code ratePerS}, whatever the answer. */
    static ProviderClient unpaced(String name, Transport transport, String providerId, int messages, double ratePerS) {
        return new ProviderClient(name, null, transport, providerId, messages, ratePerS);
    }

    ProviderClient start() {
        thread.start();
        return this;
    }

    boolean isDone() {
        return !thread.isAlive();
    }

    private void run() {
        if (budget == null) {
            runUnpaced();
            return;
        }
        for (int i = 0; i < messages && !stopped; i++) {
            String chat = name + "-" + i;
            while (!stopped) {
                Decision d = budget.tryAcquire(BudgetRequest.live(providerId, chat));
                if (!d.granted()) {
                    park(d.retryIn());
                    continue;
                }
                SendOutcome o = transport.send(providerId, chat, "message " + i + " of " + name, null);
                count(o);
                if (o instanceof SendOutcome.RetryAfter r) {
                    budget.penalize(providerId, PenaltyScope.BOT, chat, r.retryAfter());
                    park(r.retryAfter());
                    continue;
                }
                break;
            }
        }
    }

    /** Fires call i at start + i/rate from a small pool, so slow answers never lower the offered rate. */
    private void runUnpaced() {
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
        try {
            long startNs = System.nanoTime();
            List<java.util.concurrent.Future<?>> calls = new java.util.ArrayList<>();
            for (int i = 0; i < messages && !stopped; i++) {
                parkUntil(startNs + (long) (i * 1e9 / unpacedRatePerS));
                String chat = name + "-" + i;
                String text = "message " + i + " of " + name;
                calls.add(pool.submit(() -> count(transport.send(providerId, chat, text, null))));
            }
            for (java.util.concurrent.Future<?> f : calls) {
                f.get();
            }
        } catch (java.util.concurrent.ExecutionException e) {
            failed.incrementAndGet();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            pool.shutdownNow();
        }
    }

    private void count(SendOutcome o) {
        if (o instanceof SendOutcome.Delivered) {
            delivered.incrementAndGet();
        } else if (o instanceof SendOutcome.RetryAfter) {
            throttled.incrementAndGet();
        } else {
            failed.incrementAndGet();
        }
    }

    /** Waits as the sender's scheduler would (until a due time), in slices so close() ends it promptly. */
    private void park(Duration d) {
        parkUntil(System.nanoTime() + d.toNanos());
    }

    private void parkUntil(long deadlineNs) {
        long left;
        while (!stopped && (left = deadlineNs - System.nanoTime()) > 0) {
            LockSupport.parkNanos(Math.min(left, 50_000_000L));
        }
    }

    @Override
    public void close() {
        stopped = true;
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
