package dev.sluice.app.dev;

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
 * {@code sluice dev} as a user runs it: a child JVM (the shaded jar when {@code mvn verify} built it, else the test
 * classpath) on fixed ports with a data dir. {@code sluice produce} writes to it, {@code sluice results} reads what
 * the real topology and sender decided, SIGTERM stops it, and then no process it started is alive and every port is
 * free. A second start on the same data dir finds the earlier results (topics kept, schemas restored with their ids)
 * and delivers new notifications. The terminal shows only the command's own lines.
 */
class DevCommandIT {
    private static final Duration STOP_BOUND = Duration.ofSeconds(DevCommand.STOP_BOUND.toSeconds() + 10);

    @TempDir
    Path tmp;

    private Process child;

    @AfterEach
    void killLeftovers() {
        if (child != null && child.isAlive()) {
            child.descendants().forEach(ProcessHandle::destroyForcibly);
            child.destroyForcibly();
        }
    }

    @Test
    void runsUntilSigtermThenLeavesNothingAndKeepsItsDataForTheNextStart() throws Exception {
        AvroTrust.ensure();
        Path data = tmp.resolve("data");
        int[] free = Ports.freePorts(4);
        int kafkaPort = free[0];
        int registryPort = free[1];
        int redisPort = free[2];
        int telegramPort = free[3];
        List<Integer> ports = List.of(kafkaPort, registryPort, redisPort, telegramPort);
        List<String> args = List.of("dev", "--data-dir", data.toString(), "--senders", "1",
                "--kafka-port", "" + kafkaPort, "--registry-port", "" + registryPort, "--redis-port", "" + redisPort,
                "--telegram-port", "" + telegramPort);

        // first run
        Path out1 = tmp.resolve("dev1.out");
        Path err1 = tmp.resolve("dev1.err");
        start(args, out1, err1);
        String ready = awaitReady(out1, err1);
        assertThat(ready).contains("bootstrap.servers    127.0.0.1:" + kafkaPort)
                .contains("schema.registry.url  http://127.0.0.1:" + registryPort)
                .contains("redis.url            redis://127.0.0.1:" + redisPort)
                .contains("FakeTelegram http://127.0.0.1:" + telegramPort)
                .contains("produce --config ").contains("results --config ");
        Path config = data.resolve("sluice-dev.properties");
        assertThat(config).exists();

        Path events = tmp.resolve("events.jsonl");
        Files.write(events, List.of(event("dev-1", "1001"), event("dev-2", "1002"), event("dev-3", "1001")));
        assertThat(cli(new ProduceCommand(), "--file", events.toString(), "--progress", "NONE", "--config", config.toString()).exit()).isZero();
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1))
                .until(() -> cli(new ResultsCommand(), "--config", config.toString()).out().contains("results: 3 shown (DELIVERED 3)"));

        List<ProcessHandle> started = child.descendants().toList();
        assertThat(started).as("redis-server runs as a child process").isNotEmpty();
        stopAndCheckNothingLeft(started, withOpsPorts(ports, ready), out1);

        // the terminal: the command's own lines, framework logs in the file
        List<String> terminal = Files.readAllLines(out1);
        assertThat(terminal).allSatisfy(l -> assertThat(l).doesNotContain(" INFO ", " WARN ", "org.apache.kafka"));
        assertThat(terminal.size()).isLessThan(30);
        assertThat(Files.readString(err1)).isEmpty();
        assertThat(data.resolve("sluice-dev.log")).isNotEmptyFile();
        assertThat(data.resolve("registry.json")).isNotEmptyFile();

        // second run on the same data dir
        Path out2 = tmp.resolve("dev2.out");
        Path err2 = tmp.resolve("dev2.err");
        start(args, out2, err2);
        String ready2 = awaitReady(out2, err2);
        assertThat(ready2).contains("restored ").contains("schema versions");
        DevRuns.Run before = cli(new ResultsCommand(), "--config", config.toString());
        assertThat(before.out()).as(before.err()).contains("results: 3 shown (DELIVERED 3)").contains("id=dev-2 chat=1002");
        Files.write(events, List.of(event("dev-4", "1003")));
        assertThat(cli(new ProduceCommand(), "--file", events.toString(), "--progress", "NONE", "--config", config.toString()).exit()).isZero();
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofSeconds(1))
                .until(() -> cli(new ResultsCommand(), "--config", config.toString(), "--id", "dev-4").out().contains("results: 1 shown (DELIVERED 1)"));
        assertThat(cli(new ResultsCommand(), "--config", config.toString()).out()).contains("results: 4 shown (DELIVERED 4)");
        stopAndCheckNothingLeft(child.descendants().toList(), withOpsPorts(ports, ready2), out2);
    }

    private void start(List<String> args, Path out, Path err) throws IOException {
        child = DevRuns.startSluice(args, out, err);
    }

    private String awaitReady(Path out, Path err) {
        return DevRuns.awaitReady(child, out, err);
    }

    private void stopAndCheckNothingLeft(List<ProcessHandle> descendants, List<Integer> ports, Path out) throws Exception {
        child.destroy(); // SIGTERM, as Ctrl-C or a process manager would
        assertThat(child.waitFor(STOP_BOUND.toSeconds(), TimeUnit.SECONDS)).as("sluice dev stops within its bound").isTrue();
        assertThat(read(out)).contains("[dev] stopping ...").contains("[dev] stopped");
        for (ProcessHandle p : descendants) {
            assertThat(p.isAlive()).as("process %d (%s) still alive", p.pid(), p.info().command().orElse("?")).isFalse();
        }
        for (int port : ports) {
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port)); // throws if anything still listens
            }
        }
    }

    /** The fixed ports plus the ops servers' (free ports, read from the "ops" line). */
    private static List<Integer> withOpsPorts(List<Integer> fixed, String ready) {
        List<Integer> all = new ArrayList<>(fixed);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("http://127\\.0\\.0\\.1:(\\d+)/metrics").matcher(ready);
        while (m.find()) {
            all.add(Integer.parseInt(m.group(1)));
        }
        assertThat(all).hasSize(fixed.size() + 2); // the topology and one sender
        return all;
    }
}
