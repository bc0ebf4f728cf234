package dev.sluice.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.HdrHistogram.Histogram;

/**
 * {@code budget-vs-bucket4j}'s closed-loop load (split out of {@link BudgetVsBucket4j}, unchanged): {@code clients}
 * threads ask for decisions in a loop without waiting; what one measurement found ({@link Measured}) and the CPU it
 * took ({@link Cpu}).
 *
 * <p>Threads: {@link #measure} starts the client threads and waits for them; the results are merged under the total
 * histogram's monitor; nothing is kept between calls.
 */
final class DecisionLoad {
    private DecisionLoad() {
    }

    record Measured(long decisions, long granted, double seconds, Histogram latencyMicros, Cpu cpu) {
        Measured(long decisions, long granted, double seconds, Histogram latencyMicros) {
            this(decisions, granted, seconds, latencyMicros, Cpu.NONE);
        }

        Measured withCpu(Cpu used) {
            return new Measured(decisions, granted, seconds, latencyMicros, used);
        }

        /** redis-server CPU (user + sys, all its threads) per decision, µs. */
        double redisCpuMicrosPerDecision() {
            return cpu.redisMicros() / (double) decisions;
        }

        /** This JVM's CPU (all threads: client threads, Lettuce's event loop, the harness) per decision, µs. */
        double clientCpuMicrosPerDecision() {
            return cpu.jvmMicros() / (double) decisions;
        }

        /** Of the client CPU: Lettuce's event-loop threads per decision, µs. */
        double eventLoopCpuMicrosPerDecision() {
            return cpu.eventLoopMicros() / (double) decisions;
        }

        /** Of redis-server's CPU: command execution (INFO commandstats usec, script bodies included) per decision, µs. */
        double redisExecMicrosPerDecision() {
            return cpu.redisExecMicros() / (double) decisions;
        }

        /** Share of one core redis-server used over the measurement (1.0 = its one main thread saturated). */
        double redisCores() {
            return cpu.redisMicros() / (seconds * 1e6);
        }

        /** Cores this JVM used over the measurement. */
        double clientCores() {
            return cpu.jvmMicros() / (seconds * 1e6);
        }

        double opsPerS() {
            return decisions / seconds;
        }

        long p99Micros() {
            return latencyMicros.getValueAtPercentile(99);
        }

        long overAdmitted(double rate, int burst) {
            return Math.max(0, granted - (long) Math.floor(burst + rate * seconds));
        }
    }

    /** CPU time in µs of redis-server and of this JVM. */
    record Cpu(long redisMicros, long jvmMicros, long eventLoopMicros, long redisExecMicros) {
        static final Cpu NONE = new Cpu(0, 0, 0, 0);

        Cpu minus(Cpu earlier) {
            return new Cpu(redisMicros - earlier.redisMicros, jvmMicros - earlier.jvmMicros,
                    eventLoopMicros - earlier.eventLoopMicros, redisExecMicros - earlier.redisExecMicros);
        }
    }

    /** {@code clients} threads call {@code decide} in a loop for {@code duration}; latency per call in µs. */
    static Measured measure(int clients, Duration duration, BooleanSupplier decide) throws InterruptedException {
        return measure(clients, duration, 1, () -> decide.getAsBoolean() ? 1 : 0);
    }

    /**
     * {@code clients} threads call {@code grantsOfOneCall} (one call deciding {@code decisionsPerCall} candidates,
     * returning how many were granted) in a loop for {@code duration}; latency per call in µs.
     */
    static Measured measure(int clients, Duration duration, int decisionsPerCall, java.util.function.IntSupplier grantsOfOneCall)
            throws InterruptedException {
        AtomicLong decisions = new AtomicLong();
        AtomicLong granted = new AtomicLong();
        AtomicLong firstNanos = new AtomicLong(Long.MAX_VALUE);
        AtomicLong lastNanos = new AtomicLong(Long.MIN_VALUE);
        Histogram total = new Histogram(60_000_000L, 3);
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(clients);
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            Thread t = new Thread(() -> {
                Histogram h = new Histogram(60_000_000L, 3);
                long n = 0;
                long g = 0;
                try {
                    start.await();
                    long begin = System.nanoTime();
                    firstNanos.accumulateAndGet(begin, Math::min);
                    long end = begin + duration.toNanos();
                    long now = begin;
                    while (now < end) {
                        int ok = grantsOfOneCall.getAsInt();
                        long after = System.nanoTime();
                        h.recordValue(Math.max(1, (after - now) / 1000));
                        n += decisionsPerCall;
                        g += ok;
                        now = after;
                    }
                    lastNanos.accumulateAndGet(now, Math::max);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    decisions.addAndGet(n);
                    granted.addAndGet(g);
                    synchronized (total) {
                        total.add(h);
                    }
                    done.countDown();
                }
            }, "bench-client-" + c);
            threads.add(t);
            t.start();
        }
        start.countDown();
        done.await();
        double seconds = (lastNanos.get() - firstNanos.get()) / 1e9;
        return new Measured(decisions.get(), granted.get(), seconds, total);
    }
}
