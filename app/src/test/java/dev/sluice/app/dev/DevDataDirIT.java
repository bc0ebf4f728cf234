package dev.sluice.app.dev;

import static dev.sluice.app.dev.DevRuns.awaitReady;
import static dev.sluice.app.dev.DevRuns.cli;
import static dev.sluice.app.dev.DevRuns.event;
import static dev.sluice.app.dev.DevRuns.read;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.app.tools.ProduceCommand;
import dev.sluice.app.tools.ResultsCommand;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.testkit.Ports;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One {@code sluice dev} per data dir, with real child JVMs: a second start on a dir in use refuses at once naming the
 * holder's PID, leaves the tools' config file alone and the first one keeps working (two brokers on one KRaft log
 * had corrupted it and killed the first); after a {@code kill -9} of the first and of the watchdog that would stop its
 * redis-server (so that it outlives them: the fallback when the watchdog is gone too, {@code DevKillNineIT} has the
 * watchdog at work), the next start on that dir and the same --redis-port stops that redis-server by its PID, says so,
 * and comes up.
 */
class DevDataDirIT {
    private static final Duration STOP_BOUND = Duration.ofSeconds(DevCommand.STOP_BOUND.toSeconds() + 10);

    @TempDir
    Path tmp;

    private final List<Process> children = new ArrayList<>();
    private final List<ProcessHandle> redisServers = new ArrayList<>();

    @AfterEach
    void killLeftovers() {
        for (Process child : children) {
            child.descendants().forEach(ProcessHandle::destroyForcibly);
            child.destroyForcibly();
        }
        redisServers.forEach(ProcessHandle::destroyForcibly); // reparented after a kill -9: not a descendant any more
    }

    @Test
    void aSecondDevOnADirInUseRefusesAndAKilledDevsRedisIsStoppedByTheNextStart() throws Exception {
        AvroTrust.ensure();
        Path data = tmp.resolve("data");
        int[] free = Ports.freePorts(4); // distinct: four freePort() calls once gave one port twice ("given twice")
        int redisPort = free[2];
        List<String> args = List.of("dev", "--data-dir", data.toString(), "--senders", "1", "--kafka-port", "" + free[0],
                "--registry-port", "" + free[1], "--redis-port", "" + redisPort, "--telegram-port", "" + free[3]);

        Path outA = tmp.resolve("a.out");
        Process a = start(args, outA, tmp.resolve("a.err"));
        awaitReady(a, outA, tmp.resolve("a.err"));
        Path config = data.resolve("sluice-dev.properties");
        String configOfA = Files.readString(config);

        // B: same dir, its own free ports
        Path outB = tmp.resolve("b.out");
        Path errB = tmp.resolve("b.err");
        Process b = start(List.of("dev", "--data-dir", data.toString(), "--senders", "1"), outB, errB);
        assertThat(b.waitFor(30, TimeUnit.SECONDS)).as("the second sluice dev exits at once").isTrue();
        assertThat(b.exitValue()).isNotZero();
        assertThat(read(errB)).as(read(outB)).contains("dev: --data-dir " + data.toAbsolutePath() + " is in use by pid " + a.pid());
        assertThat(read(errB).lines().count()).isEqualTo(1);
        assertThat(read(outB)).doesNotContain("starting embedded Kafka");
        assertThat(Files.readString(config)).as("the tools' config still points at A").isEqualTo(configOfA);

        // A still works: a notification goes through it
        Path events = tmp.resolve("events.jsonl");
        Files.write(events, List.of(event("lock-1", "1001")));
        assertThat(cli(new ProduceCommand(), "--file", events.toString(), "--progress", "NONE", "--config", config.toString()).exit()).isZero();
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1))
                .until(() -> cli(new ResultsCommand(), "--config", config.toString()).out().contains("results: 1 shown (DELIVERED 1)"));
        assertThat(a.isAlive()).as(read(outA)).isTrue();

        // kill -9 A and its redis-server's watchdog: the redis-server outlives them
        String[] pidAndPort = Files.readString(data.resolve("redis.pid")).trim().split(" ");
        assertThat(pidAndPort).as("redis.pid: <pid> <port>").containsExactly(pidAndPort[0], "" + redisPort);
        ProcessHandle redis = ProcessHandle.of(Long.parseLong(pidAndPort[0])).orElseThrow();
        assertThat(a.descendants().map(ProcessHandle::pid)).as("redis-server is a child of A").contains(redis.pid());
        redisServers.add(redis);
        List<ProcessHandle> watchdogs = a.descendants().filter(DevKillNineIT::isWatchdog).toList();
        assertThat(watchdogs).hasSize(1);
        watchdogs.forEach(ProcessHandle::destroyForcibly);
        await().atMost(Duration.ofSeconds(10)).until(() -> watchdogs.stream().noneMatch(ProcessHandle::isAlive));
        a.destroyForcibly();
        assertThat(a.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(redis.isAlive()).as("redis-server of the killed sluice dev").isTrue();

        // C: same dir, same ports: stops that redis-server and comes up
        Path outC = tmp.resolve("c.out");
        Path errC = tmp.resolve("c.err");
        Process c = start(args, outC, errC);
        String ready = awaitReady(c, outC, errC);
        assertThat(ready).contains("[dev] stopped redis-server pid " + redis.pid() + " (port " + redisPort + ") left running by an earlier sluice dev of this dir");
        assertThat(redis.isAlive()).isFalse();
        assertThat(cli(new ResultsCommand(), "--config", config.toString()).out()).contains("results: 1 shown (DELIVERED 1)");

        List<ProcessHandle> started = c.descendants().toList();
        c.destroy();
        assertThat(c.waitFor(STOP_BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(read(outC)).contains("[dev] stopped");
        assertThat(started).noneMatch(ProcessHandle::isAlive);
        assertThat(data.resolve("redis.pid")).as("a clean stop leaves nothing to clean up").doesNotExist();
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), redisPort));
        }
        assertThat(read(errC)).isEmpty();
    }

    private Process start(List<String> args, Path out, Path err) throws IOException {
        Process p = DevRuns.startSluice(args, out, err);
        children.add(p);
        return p;
    }
}
