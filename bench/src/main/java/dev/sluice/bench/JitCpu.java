package dev.sluice.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * CPU time the JIT compiler threads (HotSpot's {@code C1 CompilerThreadN}, {@code C2 CompilerThreadN}) of some
 * processes have used, read from Linux's {@code /proc/<pid>/task/<tid>/comm} and {@code stat} (utime + stime, in
 * USER_HZ ticks of 10 ms). A lower bound: HotSpot starts and stops compiler threads as the queue grows and shrinks,
 * and a thread that ended is no longer listed. Session 14's profile of a sender under {@code many-bots} found those
 * threads at a third of its CPU 80 s after start: a window measured before the JIT settles measures the compiler.
 *
 * <p>Stateless; any thread. Without {@code /proc} (not Linux) it reads zero.
 */
final class JitCpu {
    /** USER_HZ: Linux reports task times in 1/100 s on every architecture the JDK runs on. */
    private static final long MS_PER_TICK = 10;

    private JitCpu() {
    }

    /** The compiler threads' CPU of the processes {@code pids}, summed over the threads alive now. */
    static Duration of(List<Long> pids) {
        long ms = 0;
        for (long pid : pids) {
            ms += ofProcess(pid);
        }
        return Duration.ofMillis(ms);
    }

    /** A window opened now over the processes {@code pids} whose CPU {@code cpu} reads; {@link Window#share()} closes it. */
    static Window window(java.util.function.Supplier<Duration> cpu, List<Long> pids) {
        return window(cpu, () -> of(pids));
    }

    /** As {@link #window(java.util.function.Supplier, List)}, the compiler threads' CPU read by {@code jit}. */
    static Window window(java.util.function.Supplier<Duration> cpu, java.util.function.Supplier<Duration> jit) {
        return new Window(cpu, jit, cpu.get().toMillis(), jit.get().toMillis());
    }

    /** The compiler threads' share of the processes' CPU since the window opened. */
    record Window(java.util.function.Supplier<Duration> cpu, java.util.function.Supplier<Duration> jit, long cpuMsAtStart,
                  long jitMsAtStart) {
        double share() {
            return JitCpu.share(jit.get().toMillis() - jitMsAtStart, cpu.get().toMillis() - cpuMsAtStart);
        }
    }

    /**
     * A warm-up that waits for the JIT to settle (issue 19, session 23: under {@code many-bots} on 2 cores the senders'
     * compiler threads stayed at ~30 % of their CPU for 3 minutes and fell to ~5 % after 4, so a fixed 120 s warm-up
     * measured them at 3-30 % from run to run). Waits {@code minSeconds}, then step by step until the compiler threads'
     * share of the processes' CPU over the last step is at most {@code maxShare}, or {@code maxSeconds} in all.
     */
    record Settle(int minSeconds, int maxSeconds, double maxShare, int stepSeconds) {
        Settle {
            if (minSeconds < 0 || maxSeconds < minSeconds || stepSeconds < 1 || !(maxShare >= 0)) {
                throw new IllegalArgumentException("warm-up: need 0 <= --warmup-seconds <= --warmup-max-seconds, a step >= 1 s"
                        + " and --settle-jit-share >= 0; got " + minSeconds + ", " + maxSeconds + ", " + stepSeconds + ", " + maxShare);
            }
        }

        /** The seconds waited and the compiler threads' share over the last step (what decided the end). */
        record Warmed(int seconds, double lastStepJitShare, boolean settled) {
            String describe() {
                return String.format(java.util.Locale.ROOT, "%d s warm-up (JIT %.1f%% of the CPU in its last step%s)", seconds,
                        100 * lastStepJitShare, settled ? "" : ", not settled at --warmup-max-seconds");
            }
        }

        /** Warms up the processes {@code pids} whose CPU {@code cpu} reads (the caller's thread sleeps). */
        Warmed warm(java.util.function.Supplier<Duration> cpu, List<Long> pids) throws InterruptedException {
            return warm(cpu, () -> of(pids));
        }

        /** As {@link #warm(java.util.function.Supplier, List)}, the compiler threads' CPU read by {@code jit}. */
        Warmed warm(java.util.function.Supplier<Duration> cpu, java.util.function.Supplier<Duration> jit)
                throws InterruptedException {
            int step = Math.min(stepSeconds, Math.max(1, minSeconds));
            int waited = Math.max(0, minSeconds - step);
            Thread.sleep(waited * 1000L);
            while (true) {
                Window last = window(cpu, jit);
                Thread.sleep(step * 1000L);
                waited += step;
                double share = last.share();
                if (waited >= minSeconds) {
                    Infra.say("warm-up %d s: the JIT used %.1f%% of the CPU in the last %d s (settled at <= %.1f%%)", waited,
                            100 * share, step, 100 * maxShare);
                }
                if (waited >= minSeconds && share <= maxShare) {
                    return new Warmed(waited, share, true);
                }
                if (waited >= maxSeconds) {
                    return new Warmed(waited, share, false);
                }
                step = Math.min(stepSeconds, maxSeconds - waited);
            }
        }
    }

    /** The compiler threads' share of a window's CPU: their CPU over it / all CPU over it (0 when none was used). */
    static double share(long jitMs, long cpuMs) {
        return cpuMs == 0 ? 0 : (double) jitMs / cpuMs;
    }

    private static long ofProcess(long pid) {
        Path tasks = Path.of("/proc", Long.toString(pid), "task");
        long ms = 0;
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(tasks)) {
            for (Path task : dir) {
                ms += ofThread(task);
            }
        } catch (IOException gone) {
            return 0; // the process ended (or no /proc): nothing to count
        }
        return ms;
    }

    private static long ofThread(Path task) {
        try {
            String comm = Files.readString(task.resolve("comm")).trim();
            if (!comm.startsWith("C1 Compiler") && !comm.startsWith("C2 Compiler")) {
                return 0;
            }
            String stat = Files.readString(task.resolve("stat"));
            // fields after the command, which is in parentheses and may hold spaces: state is field 3, utime 14, stime 15
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * MS_PER_TICK;
        } catch (IOException | RuntimeException e) {
            return 0; // the thread ended between listing and reading
        }
    }
}
