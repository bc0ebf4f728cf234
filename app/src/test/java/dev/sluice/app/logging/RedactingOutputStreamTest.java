package dev.sluice.app.logging;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.config.Settings;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;

class RedactingOutputStreamTest {

    @Test
    void eachLineIsRedactedBeforeItIsWritten() {
        Settings.of(Map.of("bot.sms.token", "sk-stream-secret-1"));
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(new RedactingOutputStream(sink), false, StandardCharsets.UTF_8);
        out.print("key sk-stream-");
        out.println("secret-1 and redis://:pw%zz@redis:6379");
        out.print("progress 50%\r");
        assertThat(sink.toString(StandardCharsets.UTF_8))
                .isEqualTo("key [redacted] and redis://[redacted]@redis:6379\nprogress 50%\r");
    }

    @Command(name = "boom")
    static final class Boom implements Runnable {
        @Override
        public void run() {
            throw new IllegalStateException("cannot start", new java.net.URISyntaxException("redis://:pa%zz@redis:6379", "Malformed escape pair"));
        }
    }

    @Test
    void picocliExecutionErrorsAreOneRedactedLine() {
        CommandLine cli = RedactingCliErrors.install(new CommandLine(new Boom()));
        StringWriter err = new StringWriter();
        cli.setErr(new PrintWriter(err, true));
        int code = cli.execute();
        assertThat(code).isEqualTo(1);
        assertThat(err.toString().strip()).isEqualTo(
                "boom: IllegalStateException: cannot start: URISyntaxException: Malformed escape pair: redis://[redacted]@redis:6379");
    }
}
