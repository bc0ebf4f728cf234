package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.testkit.InProcessSchemaRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ctrl-C or SIGTERM to a real {@code sluice produce} (a child JVM) in its first seconds, while it still checks the
 * schema registry and Kafka, before anything is sent: found from outside, it exited 130/143 with no summary at all (its
 * shutdown hook was installed only after the checks). Now it prints the same summary as later (nothing written, every
 * line not read) and exits with the same codes. Deterministic: the registry or the broker is a socket that accepts and
 * never answers, and the signal is sent once the child's check has connected to it (it then waits 5 s, or 10 s, for an
 * answer that never comes).
 */
class ProduceEarlyInterruptIT {
    private static final Duration CONNECT_BOUND = Duration.ofSeconds(90); // a child JVM's start on a loaded machine

    @TempDir
    Path dir;

    @Test
    void ctrlCWhileTheRegistryCheckWaitsPrintsTheSummary() throws Exception {
        try (Silent registry = new Silent()) {
            // Kafka is never reached: the registry is checked first
            Run run = interruptWhenConnected(registry, 1, "bootstrap.servers=127.0.0.1:1",
                    "schema.registry.url=http://127.0.0.1:" + registry.port());
            assertThat(run.out()).as(run.err()).containsExactly(zeroSummary());
            assertThat(run.exit()).as(run.err()).isEqualTo(ChildSluice.exitAfter(run.signal()));
        }
    }

    @Test
    void sigtermWhileTheKafkaCheckWaitsPrintsTheSummary() throws Exception {
        try (Silent broker = new Silent(); InProcessSchemaRegistry registry = InProcessSchemaRegistry.start()) {
            // the check's TCP probe, then its Admin client's connection, which waits for an answer (up to 10 s)
            Run run = interruptWhenConnected(broker, 2, "bootstrap.servers=127.0.0.1:" + broker.port(),
                    "schema.registry.url=" + registry.url(), "TERM");
            assertThat(run.out()).as(run.err()).containsExactly(zeroSummary());
            assertThat(run.exit()).as(run.err()).isEqualTo(143);
        }
    }

    private static String zeroSummary() {
        return "produce: interrupted: 0 notifications written to produce.early, 0 bad lines skipped (of 0 read), 0 failed,"
                + " 0 handed to Kafka but not confirmed within 5 s (may or may not be written), 2 lines not read (of 2)";
    }

    private record Run(String signal, int exit, List<String> out, String err) {
    }

    private Run interruptWhenConnected(Silent server, int connections, String bootstrap, String registry) throws Exception {
        return interruptWhenConnected(server, connections, bootstrap, registry, null);
    }

    /** Starts produce on a two-line file, waits until {@code server} has {@code connections}, signals, waits for the exit. */
    private Run interruptWhenConnected(Silent server, int connections, String bootstrap, String registry, String signal)
            throws Exception {
        Path events = dir.resolve("events.jsonl");
        Files.writeString(events, line(1) + line(2), StandardCharsets.UTF_8);
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        Process p = ChildSluice.sluice("produce", "--file", events.toString(), "--topic", "produce.early",
                "--progress", "none", "-D", bootstrap, "-D", registry)
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        try {
            await().atMost(CONNECT_BOUND).until(() -> server.accepted() >= connections || !p.isAlive());
            assertThat(p.isAlive()).as("still checking: %s", Files.readString(err)).isTrue();
            String sent = signal != null ? signal : ChildSluice.ctrlC(p.pid());
            ChildSluice.kill(sent, p.pid());
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("exits within the bound").isTrue();
            return new Run(sent, p.exitValue(), Files.readAllLines(out), Files.readString(err));
        } finally {
            ChildSluice.stop(p);
        }
    }

    private static String line(int i) {
        return "{\"id\":\"early-" + i + "\",\"bot_id\":\"alerts\",\"chat_id\":\"" + i + "\",\"kind\":\"k\",\"text\":\"t\"}\n";
    }

    /** A TCP server on 127.0.0.1 that accepts every connection, counts it and never answers (until closed). */
    private static final class Silent implements AutoCloseable {
        private final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        private final List<Socket> held = new CopyOnWriteArrayList<>();
        private final Thread acceptor;

        Silent() throws IOException {
            acceptor = new Thread(() -> {
                try {
                    while (true) {
                        held.add(server.accept());
                    }
                } catch (IOException closed) {
                    // close() ends it
                }
            }, "silent-" + server.getLocalPort());
            acceptor.setDaemon(true);
            acceptor.start();
        }

        int port() {
            return server.getLocalPort();
        }

        int accepted() {
            return held.size();
        }

        @Override
        public void close() throws Exception {
            server.close();
            for (Socket s : held) {
                s.close();
            }
            acceptor.join(5_000);
        }
    }
}
