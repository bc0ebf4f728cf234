package dev.sluice.app.dev;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * When the embedded broker's fault handler ends a {@code sluice dev} JVM (Kafka's {@code Exit.halt}, which skips shutdown
 * hooks), dev says so on stderr and stops its redis-server instead of vanishing and leaving it running with parent PID 1.
 * A real child JVM, a real redis-server, Kafka's own {@code ProcessTerminatingFaultHandler}.
 */
class DevFatalFaultIT {
    @TempDir
    Path tmp;

    private long redisPid = -1;

    @AfterEach
    void killLeftovers() {
        if (redisPid > 0) {
            ProcessHandle.of(redisPid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    @Test
    void aFatalFaultOfTheEmbeddedBrokerIsReportedAndStopsRedis() throws Exception {
        Path out = tmp.resolve("out");
        Path err = tmp.resolve("err");
        Process child = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx128m",
                "-cp", System.getProperty("java.class.path"), FatalFaultMain.class.getName(), "install"))
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
        Matcher m = Pattern.compile("redis pid (\\d+)").matcher(Files.readString(out));
        assertThat(m.find()).as(Files.readString(out) + Files.readString(err)).isTrue();
        redisPid = Long.parseLong(m.group(1));

        assertThat(child.exitValue()).isEqualTo(1);
        assertThat(Files.readString(out)).doesNotContain("still running");
        assertThat(Files.readString(err)).contains("sluice dev: embedded Kafka ended the process (fatal fault, exit code 1")
                .contains("stopped child process " + redisPid);
        Optional<ProcessHandle> redis = ProcessHandle.of(redisPid);
        await().atMost(Duration.ofSeconds(15)).until(() -> redis.isEmpty() || !redis.get().isAlive());
    }
}
