package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.schemas.AvroTrust;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.InProcessSchemaRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ctrl-C at a terminal reaches every process of the job: in {@code writer | sluice produce --file -} the writer dies too,
 * with half a line written (no line end yet). Found from outside: that half line was read at the end of stdin and
 * counted as a bad line ("skipped line 3 ... not JSON"). Here, for real: a shell writes two lines and half a third into
 * a pipe to a real {@code sluice produce} (a child JVM, {@link ProcessBuilder#startPipeline}), both are signalled by one
 * {@code kill} once the two lines are on the topic (INT, or TERM where this JVM's children ignore SIGINT), and the
 * summary says the two were written, no line was bad, and an incomplete last line was not sent; the topic holds two
 * records. Which comes first in the child, the end of stdin or its shutdown hook, is the race of a real Ctrl-C: either
 * way the result must be the same.
 */
class ProduceIncompleteLineIT {
    @TempDir
    Path dir;

    private static String line(int i) {
        return "{\"id\":\"part-" + i + "\",\"bot_id\":\"alerts\",\"chat_id\":\"" + i + "\",\"kind\":\"k\",\"text\":\"t\"}\n";
    }

    @Test
    void aHalfLineLeftByAnInterruptedWriterIsNotABadLineAndIsNotSent() throws Exception {
        AvroTrust.ensure();
        try (EmbeddedKafka kafka = EmbeddedKafka.start(); InProcessSchemaRegistry registry = InProcessSchemaRegistry.start()) {
            kafka.createTopics(1, "produce.partial");
            Path input = dir.resolve("input.jsonl");
            Files.writeString(input, line(1) + line(2) + "{\"id\":\"part-3\",\"bot_id\":\"al", StandardCharsets.UTF_8);
            Path out = dir.resolve("out.txt");
            Path err = dir.resolve("err.txt");
            // the writer: the input, then it waits (holding the pipe open) until it is signalled
            ProcessBuilder writer = new ProcessBuilder("sh", "-c", "cat \"$0\"; exec sleep 300", input.toString())
                    .redirectError(ProcessBuilder.Redirect.DISCARD);
            ProcessBuilder sluice = ChildSluice.sluice("produce", "--file", "-", "--topic", "produce.partial", "--progress", "none",
                    "-D", "bootstrap.servers=" + kafka.bootstrapServers(), "-D", "schema.registry.url=" + registry.url())
                    .redirectOutput(out.toFile()).redirectError(err.toFile());
            List<Process> job = ProcessBuilder.startPipeline(List.of(writer, sluice));
            Process produce = job.get(1);
            String signal;
            try {
                assertThat(ProduceInterruptIT.recordsIn(kafka, "produce.partial", 2, Duration.ofSeconds(90)))
                        .as(Files.readString(err)).isEqualTo(2);
                signal = ChildSluice.ctrlC(produce.pid());
                ChildSluice.kill(signal, job.get(0).pid(), produce.pid()); // the writer first, as when it dies a little sooner
                assertThat(produce.waitFor(30, TimeUnit.SECONDS)).as("exits within the bound").isTrue();
            } finally {
                ChildSluice.stop(job.toArray(Process[]::new));
            }
            String errText = Files.readString(err);
            assertThat(produce.exitValue()).as(errText).isEqualTo(ChildSluice.exitAfter(signal));
            assertThat(errText).doesNotContain("skipped line 3");
            List<String> summary = Files.readAllLines(out);
            assertThat(summary).as(errText).hasSize(1);
            // "the rest of stdin not read, " may come between, if the end of stdin came over a second after the signal
            assertThat(summary.get(0)).startsWith("produce: interrupted: 2 notifications written to produce.partial, 0 bad"
                    + " lines skipped (of 2 read), 0 failed, 0 handed to Kafka but not confirmed within 5 s (may or may not be"
                    + " written), ").endsWith("an incomplete last line (no line end) left unsent");
            assertThat(recordsOnTopic(kafka, "produce.partial")).as("the half line was not sent").isEqualTo(2);
        }
    }

    /** The topic's end offset: every record written, read after the writing process has exited. */
    private static long recordsOnTopic(EmbeddedKafka kafka, String topic) {
        Map<String, Object> props = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            TopicPartition p = new TopicPartition(topic, 0);
            return consumer.endOffsets(List.of(p), Duration.ofSeconds(30)).get(p);
        }
    }
}
