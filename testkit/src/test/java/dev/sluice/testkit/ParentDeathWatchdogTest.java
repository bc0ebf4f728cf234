package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The watchdog with real processes: closing its pipe (what the OS does when this JVM dies, kill -9 included) stops the
 * watched process; a child that ignores SIGTERM gets SIGKILL; a disarmed watchdog signals nothing, nor does one whose
 * child exited (it ends with it, so it never holds a PID that may be reused); and a redis-server
 * this JVM starts has one (the child-JVM kill -9 is {@code DevKillNineIT} in app).
 */
class ParentDeathWatchdogTest {
    private static final Duration BOUND = Duration.ofSeconds(20);
    private Process child;

    @AfterEach
    void stopChild() {
        if (child != null) {
            child.destroyForcibly();
        }
    }

    @Test
    void theChildIsStoppedWhenThePipeToThisJvmCloses() throws Exception {
        child = new ProcessBuilder("sleep", "300").start();
        ParentDeathWatchdog dog = ParentDeathWatchdog.watch(child).orElseThrow();
        assertThat(child.isAlive()).isTrue();
        dog.shell.getOutputStream().close(); // as when this JVM is killed
        await().atMost(BOUND).until(() -> !child.isAlive());
        await().atMost(BOUND).until(() -> !dog.shell.isAlive());
    }

    @Test
    void aChildThatIgnoresSigtermGetsSigkill() throws Exception {
        child = new ProcessBuilder("sh", "-c", "trap '' TERM; echo trapped; while :; do sleep 1; done").start();
        ParentDeathWatchdog dog = ParentDeathWatchdog.watch(child).orElseThrow();
        try (var lines = new java.io.BufferedReader(new java.io.InputStreamReader(child.getInputStream()))) {
            assertThat(lines.readLine()).as("the child ignores SIGTERM from here on").isEqualTo("trapped");
        }
        dog.shell.getOutputStream().close();
        await().atMost(BOUND).until(() -> !child.isAlive());
    }

    @Test
    void aDisarmedWatchdogSignalsNothing() throws Exception {
        child = new ProcessBuilder("sleep", "300").start();
        ParentDeathWatchdog dog = ParentDeathWatchdog.watch(child).orElseThrow();
        dog.disarm();
        assertThat(dog.shell.isAlive()).isFalse();
        assertThat(child.isAlive()).as("the owner stops it itself").isTrue();
    }

    @Test
    void aChildThatExitsIsForgottenSoItsPidIsNeverSignalled() throws Exception {
        // found from outside: the shell kept the PID of an exited child, and would signal it (maybe reused) when this JVM died
        child = new ProcessBuilder("sh", "-c", "read -r _").start(); // exits when it reads a line
        ParentDeathWatchdog dog = ParentDeathWatchdog.watch(child).orElseThrow();
        try {
            assertThat(dog.shell.isAlive()).isTrue();
            try (var stdin = child.getOutputStream()) {
                stdin.write('\n');
            }
            await().atMost(BOUND).until(() -> !child.isAlive());
            await().atMost(BOUND).untilAsserted(() -> assertThat(dog.shell.isAlive())
                    .as("the watchdog of exited pid %d", child.pid()).isFalse());
        } finally {
            dog.disarm();
        }
    }

    @Test
    void aStartedRedisServerIsWatched() {
        try (RedisInstance redis = RedisLauncher.localProcess().launchAt(0, null)) {
            long pid = redis.pid();
            assertThat(ProcessHandle.current().children()
                    .filter(p -> p.info().arguments().map(a -> a.length > 3 && a[2].equals(ParentDeathWatchdog.NAME)
                            && a[3].equals(Long.toString(pid))).orElse(false)))
                    .as("a watchdog shell for redis-server pid %d", pid).hasSize(1);
        }
    }
}
