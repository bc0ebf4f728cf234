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
}
