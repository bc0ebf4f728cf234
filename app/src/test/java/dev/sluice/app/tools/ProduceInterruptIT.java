package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.schemas.AvroTrust;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.InProcessSchemaRegistry;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real signal to a real {@code sluice produce} (a child JVM, {@code java -cp <test classpath> SluiceCli}) reading stdin
 * against the embedded broker: two lines are written and confirmed, then, while it waits for a third, SIGINT. It
 * prints the summary (2 written, the rest of stdin not read) and exits 130. Deterministic: the signal is sent only once
 * both records are on the topic, and the child is then blocked reading stdin (the hook's own path, see
 * {@link ProduceRun#stopFromHook}). Where this JVM was started with SIGINT ignored (a background job without job
 * control: the child inherits that), SIGTERM is sent instead and the exit code is 143, the JVM's 128 + 15.
 */
class ProduceInterruptIT {
    @TempDir
    Path dir;

    private static String line(int i) {
        return "{\"id\":\"sig-" + i + "\",\"bot_id\":\"alerts\",\"chat_id\":\"" + i + "\",\"kind\":\"k\",\"text\":\"t\"}\n";
    }

    @Test
    void ctrlCPrintsTheSummaryAndExits130() throws Exception {
        AvroTrust.ensure();
        try (EmbeddedKafka kafka = EmbeddedKafka.start(); InProcessSchemaRegistry registry = InProcessSchemaRegistry.start()) {
            kafka.createTopics(1, "produce.sigint");
            Path out = dir.resolve("out.txt");
            Path err = dir.resolve("err.txt");
            Process p = ChildSluice.sluice("produce", "--file", "-", "--topic", "produce.sigint", "--progress", "none",
                    "-D", "bootstrap.servers=" + kafka.bootstrapServers(), "-D", "schema.registry.url=" + registry.url())
                    .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            try (OutputStream stdin = p.getOutputStream()) {
                stdin.write((line(1) + line(2)).getBytes(StandardCharsets.UTF_8));
                stdin.flush(); // stdin stays open: the child waits for a third line
                assertThat(recordsIn(kafka, "produce.sigint", 2, Duration.ofSeconds(60))).as(Files.readString(err)).isEqualTo(2);

                String signal = ChildSluice.ctrlC(p.pid());
                ChildSluice.kill(signal, p.pid());
                assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("exits within the bound").isTrue();
                assertThat(p.exitValue()).as(Files.readString(err)).isEqualTo(ChildSluice.exitAfter(signal));
            } finally {
                ChildSluice.stop(p);
            }
            assertThat(Files.readAllLines(out)).contains("produce: interrupted: 2 notifications written to produce.sigint,"
                    + " 0 bad lines skipped (of 2 read), 0 failed, 0 handed to Kafka but not confirmed within 5 s (may or may not be"
                    + " written), the rest of stdin not read");
        }
    }

    static int recordsIn(EmbeddedKafka kafka, String topic, int expected, Duration within) {
        Map<String, Object> props = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "it-sigint-" + System.nanoTime(), ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        int n = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + within.toNanos();
            while (n < expected && System.nanoTime() < deadline) {
                n += consumer.poll(Duration.ofMillis(200)).count();
            }
        }
        return n;
    }
}
