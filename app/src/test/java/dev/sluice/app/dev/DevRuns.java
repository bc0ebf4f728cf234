package dev.sluice.app.dev;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;

/** What the tests of {@code sluice dev} as a child process share: waiting for it, its files, a tool run, an event. */
final class DevRuns {
    /** How long a {@code sluice dev} may take to report ready on a loaded 2-core machine. */
    static final Duration START_BOUND = Duration.ofSeconds(150);

    private DevRuns() {
    }

    /**
     * Starts {@code sluice <args>} as a child JVM, output to the files: the packaged jar when it is fresh (built within 2 h),
     * else this test's class path.
     */
    static Process startSluice(List<String> args, Path out, Path err) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx768m"));
        Path jar = Path.of("target", "sluice.jar");
        if (Files.exists(jar) && Files.getLastModifiedTime(jar).toInstant().isAfter(Instant.now().minus(Duration.ofHours(2)))) {
            cmd.addAll(List.of("-jar", jar.toString()));
        } else {
            cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "dev.sluice.app.SluiceCli"));
        }
        cmd.addAll(args);
        return new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    }

    /** A tool command's exit code and what it printed. */
    record Run(int exit, String out, String err) {
    }

    /** Runs a picocli command in this JVM, capturing its output. */
    static Run cli(Object command, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = new CommandLine(command).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true)).execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    /** Waits (bounded by {@link #START_BOUND}) until {@code p} printed its ready banner; fails at once if it exited. */
    static String awaitReady(Process p, Path out, Path err) {
        await().atMost(START_BOUND).pollInterval(Duration.ofMillis(500)).until(() -> {
            assertThat(p.isAlive()).as(() -> "sluice dev exited: " + read(out) + read(err)).isTrue();
            return read(out).contains("Ctrl-C stops everything.");
        });
        return read(out);
    }

    /** A CRITICAL notification line for {@code sluice produce}, expiring in 30 minutes. */
    static String event(String id, String chat) {
        return "{\"id\":\"" + id + "\",\"bot_id\":\"alerts\",\"chat_id\":\"" + chat + "\",\"kind\":\"hello\",\"event_class\":\"CRITICAL\","
                + "\"text\":\"Hello " + id + "\",\"expires_at\":\"" + Instant.now().plus(Duration.ofMinutes(30)) + "\"}";
    }

    /** The file's text, or "" when it is absent or unreadable (a child may not have written it yet). */
    static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p) : "";
        } catch (IOException e) {
            return "";
        }
    }
}
