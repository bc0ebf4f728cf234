package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.Notification;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.InProcessSchemaRegistry;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Failed and unconfirmed sends with a real Kafka producer and the embedded broker. A record the producer refuses (over
 * {@code max.request.size}: its callback reports {@code RecordTooLargeException}) is counted as failed, named with its
 * error's class and message, and ends the run with exit 2; found from outside, the summary folded such sends into "not
 * confirmed". Records that never get an answer (the way to the broker is cut after the producer learnt the topic's
 * leader: it retries them until it is closed) are "not confirmed" after a stop, although the producer, when its close bound runs
 * out, reports them to their callbacks as an error of its own ("Producer is closed forcefully.").
 */
class ProduceFailedSendsIT {
    private static EmbeddedKafka kafka;
    private static InProcessSchemaRegistry registry;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() {
        AvroTrust.ensure();
        kafka = EmbeddedKafka.start();
        kafka.createTopics(1, "produce.toolarge");
        registry = InProcessSchemaRegistry.start();
    }

    @AfterAll
    static void stop() {
        registry.close();
        kafka.close();
    }

    private static String line(int i, String text) {
        return "{\"id\":\"f-" + i + "\",\"bot_id\":\"alerts\",\"chat_id\":\"" + i + "\",\"kind\":\"k\",\"text\":\"" + text + "\"}\n";
    }

    @Test
    void aRecordTheProducerRefusesIsCountedFailedWithItsError() throws IOException {
        Path file = dir.resolve("events.jsonl");
        Files.writeString(file, line(1, "short") + line(2, "x".repeat(3000)) + line(3, "short"), StandardCharsets.UTF_8);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = new CommandLine(new ProduceCommand()).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                .execute("--file", file.toString(), "--topic", "produce.toolarge", "--progress", "NONE",
                        "-D", "bootstrap.servers=" + kafka.bootstrapServers(), "-D", "schema.registry.url=" + registry.url(),
                        "-D", "kafka.max.request.size=2048");

        assertThat(exit).as(err.toString()).isEqualTo(ToolErrors.EXIT_CANNOT_RUN);
        assertThat(out.toString()).isEmpty();
        assertThat(err.toString().lines()).singleElement().asString()
                .startsWith("produce: stopped after a failed write: 1 notifications written to produce.toolarge, 0 bad lines"
                        + " skipped (of 2 read), 1 failed (first error: RecordTooLargeException: The message is ")
                .contains("max.request.size")
                .endsWith("), 0 handed to Kafka but not confirmed (may or may not be written), 1 lines not read (of 3)");
    }

    @Test
    void recordsWithoutAnAnswerAtTheCloseBoundAreNotConfirmedNotFailed() throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        ProduceRun run = new ProduceRun(new NotificationJson(Clock.systemUTC()), "produce.unanswered", 3,
                new PrintWriter(out, true), new PrintWriter(err, true));
        String input = line(1, "t") + line(2, "t") + line(3, "t");
        // cutting the proxy leaves the producer with the partition's leader known and no way to reach it
        try (KafkaProxy proxy = KafkaProxy.forwardingAll();
             EmbeddedKafka lost = proxy.startBroker(dir.resolve("lost-kafka"))) {
            lost.createTopics(1, "produce.unanswered");
            Map<String, Object> props = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, proxy.bootstrap(),
                    ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
            try (StopAtSecond producer = new StopAtSecond(props, run)) {
                assertThat(producer.partitionsFor("produce.unanswered")).hasSize(1); // the leader: sends will not wait for it
                proxy.cut();
                run.send(new BoundedLines(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)), BoundedLines.MAX_LINE_BYTES),
                        producer, Progress.open(Progress.Mode.NONE, "produce", 0, new PrintWriter(err, true)));
            }
        }
        assertThat(run.summary()).isEqualTo(ProduceRun.EXIT_INTERRUPTED);
        assertThat(out.toString()).isEqualTo("produce: interrupted: 0 notifications written to produce.unanswered, 0 bad"
                + " lines skipped (of 2 read), 0 failed, 2 handed to Kafka but not confirmed within 5 s (may or may not be"
                + " written), 1 lines not read (of 3)\n");
    }

    /**
     * Review R11: a record whose delivery.timeout.ms ran out (the way to the broker cut after the producer learnt the
     * leader) was counted "failed" although the broker may have appended it and only the answer was lost. It is "not
     * confirmed"; the run still stops with exit 2 and names the timeout.
     */
    @Test
    void recordsWhoseDeliveryTimeoutRanOutAreNotConfirmedNotFailed() throws Exception {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        ProduceRun run = new ProduceRun(new NotificationJson(Clock.systemUTC()), "produce.timedout", 3,
                new PrintWriter(out, true), new PrintWriter(err, true));
        String input = line(1, "t") + line(2, "t") + line(3, "t");
        try (KafkaProxy proxy = KafkaProxy.forwardingAll();
             EmbeddedKafka lost = proxy.startBroker(dir.resolve("timedout-kafka"))) {
            lost.createTopics(1, "produce.timedout");
            Map<String, Object> props = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, proxy.bootstrap(),
                    // not idempotent: an idempotent producer cut off before its InitProducerId answer keeps the batches
                    // unexpired and flush() waits without end (seen here once; see the session notes)
                    ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false",
                    ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 1000, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 1500,
                    ProducerConfig.LINGER_MS_CONFIG, 0);
            try (KafkaProducer<String, Notification> producer = new KafkaProducer<>(props, new StringSerializer(),
                    (topic, n) -> new byte[16])) {
                assertThat(producer.partitionsFor("produce.timedout")).hasSize(1);
                proxy.cut();
                run.send(new BoundedLines(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)), BoundedLines.MAX_LINE_BYTES),
                        producer, Progress.open(Progress.Mode.NONE, "produce", 0, new PrintWriter(err, true)));
            }
        }
        assertThat(run.summary()).isEqualTo(ToolErrors.EXIT_CANNOT_RUN);
        assertThat(out.toString()).isEmpty();
        assertThat(err.toString().lines().toList()).last().asString()
                .startsWith("produce: stopped, Kafka did not confirm writes within delivery.timeout.ms: 0 notifications"
                        + " written to produce.timedout, 0 bad lines skipped (of 3 read), 0 failed, 3 handed to Kafka but"
                        + " not confirmed (may or may not be written; first: TimeoutException: ")
                .endsWith("), 0 lines not read (of 3)");
    }

    /** A real producer that, at its second send, stops the run as Ctrl-C's hook does first. */
    private static final class StopAtSecond extends KafkaProducer<String, Notification> {
        private final ProduceRun run;
        private int sends;

        StopAtSecond(Map<String, Object> props, ProduceRun run) {
            super(props, new StringSerializer(), (topic, n) -> new byte[16]);
            this.run = run;
        }

        @Override
        public Future<RecordMetadata> send(ProducerRecord<String, Notification> record, Callback callback) {
            Future<RecordMetadata> f = super.send(record, callback);
            if (++sends == 2) {
                run.stop();
            }
            return f;
        }
    }
}
