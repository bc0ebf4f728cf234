package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.app.SluiceCli;
import dev.sluice.testkit.InProcessSchemaRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The tools fail fast and in one line: an address nothing listens on, a port that accepts connections but never
 * answers, a missing key, and {@code sluice} without a command. No broker or registry runs here; the "silent"
 * server is a real listening socket that never answers.
 */
class FailFastTest {
    private static final String EVENT = "{\"id\":\"a\",\"bot_id\":\"b\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\"}";

    @TempDir
    Path dir;

    /** @param err the command's stderr and whatever else reached System.err meanwhile (framework logs) */
    private record Run(int exit, String out, String err, Duration took) {
        List<String> errorLines() {
            return err.lines().filter(l -> !l.isBlank()).toList();
        }
    }

    private static Run run(Callable<Integer> command, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        ByteArrayOutputStream systemErr = new ByteArrayOutputStream();
        PrintStream original = System.err;
        System.setErr(new PrintStream(systemErr, true, StandardCharsets.UTF_8));
        long start = System.nanoTime();
        int exit;
        try {
            exit = new CommandLine(command).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                    .setCaseInsensitiveEnumValuesAllowed(true).execute(args);
        } finally {
            System.setErr(original);
        }
        return new Run(exit, out.toString(), err + systemErr.toString(StandardCharsets.UTF_8), Duration.ofNanos(System.nanoTime() - start));
    }

    private Path events() throws IOException {
        Path file = dir.resolve("events.jsonl");
        Files.writeString(file, EVENT + "\n");
        return file;
    }

    private static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort(); // closed again: nothing listens there now
        }
    }

    @Test
    void produceNamesTheRegistryAddressInOneLineWhenNothingListens() throws Exception {
        String kafka = "127.0.0.1:" + closedPort();
        {
            // the registry is checked first
            Run r = run(new ProduceCommand(), "--file", events().toString(), "--progress", "none",
                    "-D", "bootstrap.servers=" + kafka, "-D", "schema.registry.url=http://127.0.0.1:" + closedPort());
            assertThat(r.exit()).isEqualTo(ToolErrors.EXIT_CANNOT_RUN);
            assertThat(r.errorLines()).hasSize(1);
            assertThat(r.err()).contains("produce: cannot reach the schema registry at http://127.0.0.1:")
                    .contains("(schema.registry.url)").contains("connection refused").doesNotContain("\tat ");
        }
    }

    @Test
    void produceAndReplayAndResultsNameTheBrokerWithinTenSeconds() throws Exception {
        String kafka = "127.0.0.1:" + closedPort();
        try (InProcessSchemaRegistry registry = InProcessSchemaRegistry.start()) {
            String[] common = {"-D", "bootstrap.servers=" + kafka, "-D", "schema.registry.url=" + registry.url()};
            List<Run> runs = List.of(
                    run(new ProduceCommand(), concat(new String[]{"--file", events().toString(), "--progress", "none"}, common)),
                    run(new ReplayCommand(), concat(new String[]{"--from", "delivery.results", "--dry-run", "--progress", "none"}, common)),
                    run(new ResultsCommand(), common));
            for (Run r : runs) {
                assertThat(r.exit()).as(r.err()).isEqualTo(ToolErrors.EXIT_CANNOT_RUN);
                assertThat(r.errorLines()).as(r.err()).hasSize(1);
                assertThat(r.err()).contains("cannot reach Kafka at " + kafka + " (bootstrap.servers)").contains("connection refused");
                assertThat(r.took()).isLessThan(Duration.ofSeconds(10));
            }
        }
    }

    @Test
    void aBrokerAddressThatAcceptsButNeverAnswersFailsWithinTheTimeout() throws Exception {
        try (ServerSocket silent = new ServerSocket(0); InProcessSchemaRegistry registry = InProcessSchemaRegistry.start()) {
            String kafka = "127.0.0.1:" + silent.getLocalPort();
            Run r = run(new ResultsCommand(), "-D", "bootstrap.servers=" + kafka, "-D", "schema.registry.url=" + registry.url());
            assertThat(r.exit()).isEqualTo(ToolErrors.EXIT_CANNOT_RUN);
            assertThat(r.err()).contains("Kafka at " + kafka + " (bootstrap.servers) accepts connections but did not answer within 10 s");
            assertThat(r.errorLines()).hasSize(1);
            assertThat(r.took()).isLessThan(Reachability.TIMEOUT.plusSeconds(3));
        }
    }

    @Test
    void aRegistryThatAcceptsButNeverAnswersFailsWithinItsTimeout() throws Exception {
        try (ServerSocket silent = new ServerSocket(0)) {
            Run r = run(new ResultsCommand(), "-D", "bootstrap.servers=127.0.0.1:" + closedPort(),
                    "-D", "schema.registry.url=http://127.0.0.1:" + silent.getLocalPort());
            assertThat(r.exit()).isEqualTo(ToolErrors.EXIT_CANNOT_RUN);
            assertThat(r.errorLines()).containsExactly("results: cannot reach the schema registry at http://127.0.0.1:" + silent.getLocalPort()
                    + " (schema.registry.url) within 5 s: no answer (timed out) (--verbose for details)");
            assertThat(r.took()).isLessThan(Reachability.REGISTRY_TIMEOUT.plusSeconds(3));
        }
    }

    @Test
    void aMissingKeyIsNamedInOneLineAndTheStackTraceNeedsVerbose() throws Exception {
        Run r = run(new ProduceCommand(), "--file", events().toString(), "-D", "schema.registry.url=http://127.0.0.1:1");
        assertThat(r.exit()).isEqualTo(ToolErrors.EXIT_CANNOT_RUN);
        assertThat(r.errorLines()).containsExactly("produce: missing required config 'bootstrap.servers' (or env SLUICE_BOOTSTRAP_SERVERS);"
                + " set it in --config FILE, with -D bootstrap.servers=... or in the environment (--verbose for details)");

        Run noRegistry = run(new ResultsCommand(), "-D", "bootstrap.servers=127.0.0.1:1");
        assertThat(noRegistry.errorLines()).hasSize(1);
        assertThat(noRegistry.err()).contains("missing required config 'schema.registry.url'");

        Run verbose = run(new ProduceCommand(), "--file", events().toString(), "--verbose", "-D", "schema.registry.url=http://127.0.0.1:1");
        assertThat(verbose.err()).contains("missing required config 'bootstrap.servers'").contains("\tat dev.sluice.config.Settings.required");
    }

    @Test
    void anUnreadableConfigFileIsNamedWithoutTheHintToSetAKey() throws Exception {
        Run r = run(new ProduceCommand(), "--file", events().toString(), "--config", "/nonexistent.properties");
        assertThat(r.exit()).isEqualTo(ToolErrors.EXIT_CANNOT_RUN);
        assertThat(r.errorLines()).hasSize(1);
        assertThat(r.err()).contains("produce: cannot read config file /nonexistent.properties").doesNotContain("-D config=", "set it in");
    }

    @Test
    void userInfoInAnUnreachableRegistryUrlIsNotPrinted() throws Exception {
        Run r = run(new ProduceCommand(), "--file", events().toString(), "--verbose", "-D", "bootstrap.servers=127.0.0.1:1",
                "-D", "schema.registry.url=http://alice:s3cr3t-pw@127.0.0.1:" + closedPort());
        assertThat(r.exit()).isEqualTo(ToolErrors.EXIT_CANNOT_RUN);
        assertThat(r.err()).contains("cannot reach the schema registry at http://127.0.0.1:").doesNotContain("s3cr3t-pw", "alice");
    }

    @Test
    void sluiceAlonePrintsUsageAndExitsNonZero() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = new CommandLine(new SluiceCli()).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true)).execute();
        assertThat(exit).isEqualTo(SluiceCli.EXIT_NO_COMMAND);
        assertThat(err.toString()).startsWith("Usage: sluice").contains("produce", "results", "replay");
        assertThat(out.toString()).isEmpty();
    }

    private static String[] concat(String[] a, String[] b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
