package dev.sluice.app.dev;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code sluice dev} refuses what cannot work before it starts anything (DevCommandIT runs it for real). */
class DevCommandTest {
    private record Run(int exit, String out, String err) {
    }

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = new CommandLine(new DevCommand()).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true)).execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void aTakenPortIsNamedInOneLineBeforeAnythingStarts(@TempDir Path dir) throws Exception {
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
            int port = taken.getLocalPort();
            Run r = run("--data-dir", dir.resolve("data").toString(), "--registry-port", Integer.toString(port));
            assertThat(r.exit()).isEqualTo(2);
            assertThat(r.err().lines().toList()).containsExactly("dev: --registry-port " + port + ": 127.0.0.1:" + port
                    + " is in use (Address already in use) (--verbose for details)");
            assertThat(r.out()).isEmpty();
            assertThat(dir.resolve("data")).as("nothing started, nothing written").doesNotExist();
        }
    }

    @Test
    void optionsOutOfRangeAreUsageErrors() {
        assertThat(run("--senders", "0").err()).contains("--senders 0: expected 1..16");
        assertThat(run("--budget", "shared").err()).contains("--budget shared: expected redis or local");
        assertThat(run("--kafka-port", "70000").err()).contains("--kafka-port 70000: expected 0 (a free one) or 1..65535");
        assertThat(run("--kafka-port", "9999", "--redis-port", "9999").err()).contains("--redis-port 9999: given twice");
    }

    @Test
    void dev_refuses_an_unknown_key_before_anything_starts(@TempDir Path dir) {
        Run r = run("--data-dir", dir.resolve("data").toString(), "-D", "budget.global.rate.per.sec=10");
        assertThat(r.exit()).isNotZero();
        assertThat(r.err().lines().toList()).containsExactly("dev: unknown config 'budget.global.rate.per.sec' (given with -D):"
                + " did you mean 'budget.global.rate.per.s'?; the keys are described in README.md, section 'Run against real Kafka, a schema registry and Redis', and by topic in docs/operations.md"
                + " (--verbose for details)");
        assertThat(dir.resolve("data")).as("nothing started, nothing written").doesNotExist();
    }

    /** Before: every -D key went to the senders only, so -D text.too.long=split was silently useless. */
    @Test
    void each_key_goes_to_the_components_that_read_it() {
        dev.sluice.config.Settings loaded = dev.sluice.config.Settings.of(java.util.Map.of("text.too.long", "split",
                "budget.global.rate.per.s", "10", "kafka.linger.ms", "5", "bootstrap.servers", "elsewhere:9092",
                "bot.alerts.token", "1:x"));
        assertThat(DevCommand.keysFor("topology", loaded).asMap()).containsOnlyKeys("text.too.long", "kafka.linger.ms");
        assertThat(DevCommand.keysFor("sender", loaded).asMap()).containsOnlyKeys("budget.global.rate.per.s", "kafka.linger.ms",
                "bot.alerts.token");
    }
}
