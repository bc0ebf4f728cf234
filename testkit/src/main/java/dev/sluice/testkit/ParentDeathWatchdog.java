package dev.sluice.testkit;

import java.io.IOException;
import java.util.List;
import java.util.Optional;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes a child process die with this JVM, however the JVM ends ({@code kill -9} included), where Java has no
 * {@code prctl(PR_SET_PDEATHSIG)}: a second child, a POSIX shell, blocks in {@code read} on a pipe whose only write end
 * is held by this JVM (Java closes every other descriptor in the children it starts). When this JVM ends, by any means,
 * the OS closes that end, {@code read} returns at end of file, and the shell sends the watched process SIGTERM
 * (Redis flushes its append-only file and exits), then SIGKILL if it is still alive after {@value #KILL_AFTER_TENTHS}
 * tenths of a second. No polling of PIDs while the JVM lives, so nothing depends on a PID of this JVM not being reused.
 *
 * <p>An owner that stops the watched process itself calls {@link #disarm()} first, so the shell never signals a PID
 * that may have been reused. A watched process that exits by itself (a crash, the OOM killer, a {@code SHUTDOWN}) is
 * forgotten the same way as soon as this JVM sees it end: the shell is stopped and holds its PID no more. Without
 * {@code sh} (not a POSIX system) there is no watchdog: a warning says so.
 */
public final class ParentDeathWatchdog {
    private static final Logger LOG = LoggerFactory.getLogger(ParentDeathWatchdog.class);
    /** The shell's {@code $0}: what {@code ps} shows for it, and how a test finds it. */
    public static final String NAME = "sluice-parent-death-watchdog";
    static final int KILL_AFTER_TENTHS = 100;
    private static final String SCRIPT = "read -r _; kill -TERM \"$1\" 2>/dev/null || exit 0; i=0; "
            + "while kill -0 \"$1\" 2>/dev/null; do i=$((i+1)); "
            + "if [ \"$i\" -ge " + KILL_AFTER_TENTHS + " ]; then kill -KILL \"$1\" 2>/dev/null; exit 0; fi; sleep 0.1; done";

    /** Held (never written, never closed) while armed: its stdin pipe is the tie to this JVM. */
    final Process shell;

    private ParentDeathWatchdog(Process shell) {
        this.shell = shell;
    }

    /**
     * Starts a watchdog for {@code child}.
     *
     * @return empty when no shell could be started (then a WARN names the PID that would outlive a killed JVM)
     */
    public static Optional<ParentDeathWatchdog> watch(Process child) {
        try {
            Process shell = new ProcessBuilder(List.of("sh", "-c", SCRIPT, NAME, Long.toString(child.pid())))
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            ParentDeathWatchdog dog = new ParentDeathWatchdog(shell);
            // the child's PID is free for reuse once it has exited: the shell must never signal it after that
            child.onExit().thenRun(dog::forget);
            return Optional.of(dog);
        } catch (IOException e) {
            LOG.warn("no watchdog for pid {} ({}): it would outlive a kill -9 of this JVM", child.pid(), e.getMessage());
            return Optional.empty();
        }
    }

    /** The shell's PID. */
    public long pid() {
        return shell.pid();
    }

    /** Stops the shell (SIGKILL, so it cannot signal anything) and waits up to 2 s for it. Idempotent. */
    public void disarm() {
        forget();
        try {
            shell.waitFor(2, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops the shell (SIGKILL: once it is delivered, the shell signals nothing), without waiting. Idempotent. */
    private void forget() {
        shell.destroyForcibly();
    }
}
