package dev.sluice.app.dev;

import static dev.sluice.app.dev.DevRuns.awaitReady;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.testkit.ParentDeathWatchdog;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kill -9} of a {@code sluice dev} without {@code --data-dir} (a real child JVM): its redis-server dies with it,
 * through the watchdog RedisInstance starts beside it (before, it kept running with nothing left to stop it, its
 * temporary dir already orphaned).
 */
class DevKillNineIT {
    /** The watchdog's SIGTERM at once, its SIGKILL after 10 s, plus a loaded machine's slack. */
    private static final Duration GONE_BOUND = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    private final List<ProcessHandle> leftovers = new ArrayList<>();

    @AfterEach
    void killLeftovers() {
        leftovers.forEach(ProcessHandle::destroyForcibly);
    }

    @Test
    void redisServerDiesWithAKilledDev() throws Exception {
        Path out = tmp.resolve("dev.out");
        Path err = tmp.resolve("dev.err");
        Process dev = DevRuns.startSluice(List.of("dev", "--senders", "1"), out, err);
        leftovers.add(dev.toHandle());
        try {
            awaitReady(dev, out, err);
        } finally {
            dev.descendants().forEach(leftovers::add);
        }
        List<ProcessHandle> watchdogs = dev.descendants().filter(DevKillNineIT::isWatchdog).toList();
        assertThat(watchdogs).as("sluice dev's redis-server has a watchdog").hasSize(1);
        long redisPid = Long.parseLong(watchdogs.get(0).info().arguments().orElseThrow()[3]);
        List<ProcessHandle> redis = dev.descendants().filter(p -> p.pid() == redisPid).toList();
        assertThat(redis).as("the watched pid %d is sluice dev's child", redisPid).hasSize(1);
        assertThat(redis.get(0).info().commandLine().orElse("")).contains("redis");

        dev.destroyForcibly(); // SIGKILL: no shutdown hook runs
        assertThat(dev.waitFor(30, TimeUnit.SECONDS)).isTrue();

        await().atMost(GONE_BOUND).pollInterval(Duration.ofMillis(200))
                .untilAsserted(() -> assertThat(redis.get(0).isAlive()).as("redis-server pid %d after kill -9 of its sluice dev",
                        redis.get(0).pid()).isFalse());
        await().atMost(GONE_BOUND).until(() -> leftovers.stream().filter(DevKillNineIT::isWatchdog).noneMatch(ProcessHandle::isAlive));
    }

    static boolean isWatchdog(ProcessHandle p) {
        return p.info().arguments().map(a -> a.length > 2 && a[2].equals(ParentDeathWatchdog.NAME)).orElse(false);
    }
}
