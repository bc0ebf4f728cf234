package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.app.SluiceCli;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What the tests that run {@code sluice} as a child JVM ({@code java -cp <test classpath> SluiceCli}) and signal it
 * share: the command line, real signals by PID ({@code kill}), and the stop by PID a test's finally block does.
 */
final class ChildSluice {
    private ChildSluice() {
    }

    /** {@code java -Xmx256m -cp <this test's class path> dev.sluice.app.SluiceCli <args>}. */
    static ProcessBuilder sluice(String... args) {
        List<String> cmd = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-cp", System.getProperty("java.class.path"), SluiceCli.class.getName()));
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd);
    }

    /**
     * The signal that stands for Ctrl-C to {@code pid}: INT, or TERM where the process ignores SIGINT (it inherits that
     * when this JVM runs as a background job without job control).
     */
    static String ctrlC(long pid) throws IOException {
        return ignores(pid, 2) ? "TERM" : "INT";
    }

    /** The JVM's exit code after {@code signal} (INT or TERM): 128 + the signal's number. */
    static int exitAfter(String signal) {
        return switch (signal) {
            case "INT" -> 130;
            case "TERM" -> 143;
            default -> throw new IllegalArgumentException(signal);
        };
    }

    /** {@code kill -<signal> <pids...>}: one call, as a terminal's Ctrl-C reaches every process of the foreground job. */
    static void kill(String signal, long... pids) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("kill", "-" + signal));
        for (long pid : pids) {
            cmd.add(Long.toString(pid));
        }
        Process kill = new ProcessBuilder(cmd).inheritIO().start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).as("kill returns").isTrue();
        assertThat(kill.exitValue()).as("kill -%s %s", signal, cmd).isZero();
    }

    /** For a finally block: SIGKILL to each process still alive, by its PID, and a bounded wait for it to end. */
    static void stop(Process... processes) throws InterruptedException {
        for (Process p : processes) {
            if (p != null && p.isAlive()) {
                ProcessHandle.of(p.pid()).ifPresent(ProcessHandle::destroyForcibly);
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    /** Whether process {@code pid} ignores signal {@code signal} (its SigIgn mask in /proc; false where unreadable). */
    static boolean ignores(long pid, int signal) throws IOException {
        Path status = Path.of("/proc", Long.toString(pid), "status");
        if (!Files.isReadable(status)) {
            return false;
        }
        for (String l : Files.readAllLines(status)) {
            if (l.startsWith("SigIgn:")) {
                return new BigInteger(l.substring("SigIgn:".length()).trim(), 16).testBit(signal - 1);
            }
        }
        return false;
    }
}
