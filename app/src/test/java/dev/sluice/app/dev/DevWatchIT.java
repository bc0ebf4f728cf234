package dev.sluice.app.dev;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.metrics.BudgetState;
import dev.sluice.metrics.SenderMetrics;
import dev.sluice.testkit.ParentDeathWatchdog;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * {@link DevWatch} on a real redis-server and the senders' own meters: nothing is said while all is well; a redis-server
 * that exits is said once, with what it means; a sender's budget mode change is said with the sender's number, both
 * modes and what the new one means, and again when it comes back; and once redis-server has exited, its parent-death
 * watchdog no longer holds its PID.
 */
class DevWatchIT {
    @Test
    void aRedisThatExitsAndModeChangesAreSaidOnce() throws Exception {
        List<String> said = new CopyOnWriteArrayList<>();
        SimpleMeterRegistry one = new SimpleMeterRegistry();
        SimpleMeterRegistry two = new SimpleMeterRegistry();
        SenderMetrics first = SenderMetrics.bind(one, Set.of("alerts"), BudgetState.SHARED);
        SenderMetrics.bind(two, Set.of("alerts"), BudgetState.SHARED);
        try (RedisInstance redis = RedisLauncher.localProcess().launch()) {
            DevWatch watch = new DevWatch(redis, List.of(one, two), said::add);
            watch.check();
            watch.check();
            assertThat(said).isEmpty();

            redis.stop();
            first.budgetState(BudgetState.FALLBACK_LOCAL);
            watch.check();
            watch.check();
            assertThat(said).hasSize(2);
            assertThat(said.get(0)).startsWith("redis-server (port " + redis.port() + ") exited: ")
                    .contains("budget.redis.outage.mode");
            assertThat(said.get(1)).isEqualTo("sender 1: budget mode shared -> fallback_local (Redis unreachable: it "
                    + "decides alone at its share of the rate)");

            first.budgetState(BudgetState.SHARED);
            watch.check();
            assertThat(said).hasSize(3);
            assertThat(said.get(2)).isEqualTo("sender 1: budget mode fallback_local -> shared (the shared budget in "
                    + "Redis again)");
        }
    }

    /**
     * Found from outside: when dev's redis-server exited by itself (a crash, the OOM killer, a SHUTDOWN), the watchdog that
     * stops it should dev be killed kept its PID, and a later kill of dev made it signal that PID, by then maybe another
     * process's. Now, once it has exited (what the watch reports), no watchdog holds its PID.
     */
    @Test
    void aRedisThatExitsByItselfIsNoLongerWatched() throws Exception {
        List<String> said = new CopyOnWriteArrayList<>();
        try (RedisInstance redis = RedisLauncher.localProcess().launch()) {
            long pid = redis.pid();
            DevWatch watch = new DevWatch(redis, List.of(), said::add);
            assertThat(watchdogsOf(pid)).as("dev's redis-server pid %d is watched", pid).hasSize(1);

            try (Socket s = new Socket("127.0.0.1", redis.port())) {
                s.getOutputStream().write("*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n".getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                assertThat(s.getInputStream().read()).as("Redis closes the connection as it exits").isEqualTo(-1);
            }
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                watch.check();
                assertThat(said).hasSize(1);
            });
            assertThat(said.get(0)).startsWith("redis-server (port " + redis.port() + ") exited: ");
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(watchdogsOf(pid))
                    .as("watchdogs still holding exited redis-server pid %d", pid).isEmpty());
        }
    }

    /** The live watchdog shells of this JVM that would signal {@code pid}. */
    private static List<ProcessHandle> watchdogsOf(long pid) {
        return ProcessHandle.current().children().filter(ProcessHandle::isAlive)
                .filter(p -> p.info().arguments().map(a -> a.length > 3 && a[2].equals(ParentDeathWatchdog.NAME)
                        && a[3].equals(Long.toString(pid))).orElse(false))
                .toList();
    }
}
