package dev.sluice.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * A bad option value is a usage error: one line naming the option and the value, exit 2, no Java class or internal
 * name (before: IllegalArgumentException with exit 1, the internal name globalPerSecond, FileAlreadyExistsException,
 * UncheckedIOException "Is a directory"). Run as {@code main} runs them, through {@code RedactingCliErrors}.
 */
class OptionErrorsTest {
    @TempDir
    Path dir;

    private record Run(int exit, String out, String err) {
    }

    private static Run sluice(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cli = dev.sluice.app.logging.RedactingCliErrors.install(new CommandLine(new SluiceCli())
                .setCaseInsensitiveEnumValuesAllowed(true)).setErr(new PrintWriter(err, true)).setOut(new PrintWriter(out, true));
        return new Run(cli.execute(args), out.toString(), err.toString());
    }

    private static void assertUsageError(Run r, String expected) {
        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(2);
        String first = r.err().lines().findFirst().orElse("");
        assertThat(first).contains(expected).doesNotContainPattern("[A-Z][a-zA-Z]+Exception");
    }

    @Test
    void planBurstBeyondTheLimit() throws Exception {
        Path events = dir.resolve("events.csv");
        Files.write(events, List.of("time", "2025-01-01T00:00:00Z", "2025-01-01T00:00:01Z"));
        assertUsageError(sluice("plan", "--events", events.toString(), "--rate", "30/s", "--burst", "99999999999"),
                "--burst': must be 1..1000000000, got 99999999999");
    }

    @Test
    void fakeTelegramLimitsBelowOne() {
        Run r = sluice("fake-telegram", "--bot-per-second", "0", "--port", "0");
        assertUsageError(r, "--bot-per-second 0: expected at least 1");
        assertThat(r.err()).doesNotContain("globalPerSecond");
        assertUsageError(sluice("fake-telegram", "--group-per-minute", "0", "--port", "0"), "--group-per-minute 0: expected at least 1");
    }

    @Test
    void schemaOutAnExistingFile() throws Exception {
        Path file = Files.writeString(dir.resolve("existing.avsc"), "x");
        assertUsageError(sluice("schema", "--out", file.toString()), "--out " + file + ": exists and is not a directory");
        assertThat(Files.readString(file)).isEqualTo("x");
    }

    @Test
    void produceFileADirectory() {
        assertUsageError(sluice("produce", "--file", dir.toString(), "-D", "bootstrap.servers=127.0.0.1:1",
                "-D", "schema.registry.url=http://127.0.0.1:1"), "--file " + dir + ": is a directory");
    }
}
