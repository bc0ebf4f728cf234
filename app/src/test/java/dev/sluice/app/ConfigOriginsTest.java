package dev.sluice.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.config.Settings;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * An invalid value names where it came from: {@code -D}, the {@code --config} file or the environment variable (before:
 * always "(env SLUICE_...)", also for a value given with -D or in the file). Checked before any connection.
 */
class ConfigOriginsTest {
    @TempDir
    Path dir;

    private record Run(int exit, String err) {
    }

    private static Run sluice(String... args) {
        StringWriter err = new StringWriter();
        CommandLine cli = dev.sluice.app.logging.RedactingCliErrors.install(new CommandLine(new SluiceCli()))
                .setErr(new PrintWriter(err, true)).setOut(new PrintWriter(new StringWriter(), true));
        return new Run(cli.execute(args), err.toString());
    }

    @Test
    void aValueGivenWithDIsSaidToBeGivenWithD() {
        Run r = sluice("results", "-D", "bootstrap.servers=127.0.0.1:1", "-D", "schema.registry.url=ftp://nowhere");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("invalid value 'ftp://nowhere' for config 'schema.registry.url' (given with -D)")
                .doesNotContain("(env SLUICE_");

        Run sender = sluice("sender", "-D", "bootstrap.servers=127.0.0.1:1", "-D", "schema.registry.url=http://127.0.0.1:1",
                "-D", "bot.alerts.token=1:x", "-D", "redis.url=redis://127.0.0.1:1", "-D", "budget.global.rate.per.s=abc");
        assertThat(sender.exit()).isNotZero();
        assertThat(sender.err()).contains("'budget.global.rate.per.s' (given with -D)").doesNotContain("(env SLUICE_");
    }

    @Test
    void aValueFromTheFileIsSaidToBeInTheFile() throws Exception {
        Path file = dir.resolve("sluice.properties");
        Files.write(file, List.of("bootstrap.servers=127.0.0.1:1", "schema.registry.url=ftp://nowhere"));
        Run r = sluice("results", "--config", file.toString());
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("for config 'schema.registry.url' (in " + file + ")").doesNotContain("(env SLUICE_");
    }

    @Test
    void aValueFromTheEnvironmentStillNamesTheVariable() {
        ConfigOptions o = new ConfigOptions();
        o.configFile = null;
        o.load(Map.of("SLUICE_BOOTSTRAP_SERVERS", "no-port-here"));
        assertThat(ConfigOrigins.message(Settings.invalid("bootstrap.servers", "no-port-here", "host:port")))
                .contains("(env SLUICE_BOOTSTRAP_SERVERS)");

        o.overrides.put("bootstrap.servers", "x");
        o.load(Map.of("SLUICE_BOOTSTRAP_SERVERS", "no-port-here")); // -D wins over the variable
        assertThat(ConfigOrigins.message(Settings.invalid("bootstrap.servers", "x", "host:port"))).contains("(given with -D)");
    }
}
