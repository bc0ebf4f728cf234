package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.Notification;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.testkit.EmbeddedKafka;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Seen once in ProduceFailedSendsIT: an idempotent producer (what {@code sluice produce} uses) whose InitProducerId
 * request is never answered keeps its batches unexpired past {@code delivery.timeout.ms}, and {@code KafkaProducer.flush()}
 * waited without end: a scripted {@code sluice produce} hung. Here a broker reached through a proxy that forwards every
 * request but InitProducerId (api key 22): the run ends within its confirm bound, the records counted as not confirmed.
 */
class ProduceUnansweredIdIT {
    @TempDir
    Path dir;

    private static String line(int i) {
        return "{\"id\":\"u-" + i + "\",\"bot_id\":\"alerts\",\"chat_id\":\"" + i + "\",\"kind\":\"k\",\"text\":\"t\"}\n";
    }

    @Test
    @Timeout(value = 90, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aProducerKafkaNeverGivesAnIdEndsWithinTheConfirmBound() throws Exception {
        AvroTrust.ensure();
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        ProduceRun run = new ProduceRun(new NotificationJson(Clock.systemUTC()), "produce.noid", 3,
                new PrintWriter(out, true), new PrintWriter(err, true));
        run.confirmBound(Duration.ofSeconds(3));
        long took;
        try (KafkaProxy proxy = KafkaProxy.withoutProducerIds(); EmbeddedKafka kafka = proxy.startBroker(dir.resolve("kafka"))) {
            kafka.createTopics(1, "produce.noid");
            Map<String, Object> props = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, proxy.bootstrap(),
                    ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true",
                    ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 1000, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 1500,
                    ProducerConfig.LINGER_MS_CONFIG, 0);
            try (KafkaProducer<String, Notification> producer = new KafkaProducer<>(props, new StringSerializer(),
                    (topic, n) -> new byte[16])) {
                assertThat(producer.partitionsFor("produce.noid")).hasSize(1);
                long start = System.nanoTime();
                String input = line(1) + line(2) + line(3);
                run.send(new BoundedLines(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)),
                        BoundedLines.MAX_LINE_BYTES), producer, Progress.open(Progress.Mode.NONE, "produce", 0,
                        new PrintWriter(err, true)));
                took = (System.nanoTime() - start) / 1_000_000;
                producer.close(Duration.ZERO);
            }
            assertThat(proxy.dropped()).as("InitProducerId requests never forwarded").isPositive();
        }
        assertThat(took).as("ms until the run gave up waiting").isBetween(2_900L, 10_000L);
        assertThat(run.summary()).isEqualTo(ToolErrors.EXIT_CANNOT_RUN);
        assertThat(out.toString()).isEmpty();
        assertThat(err.toString().lines().toList()).last().asString().isEqualTo("produce: stopped, Kafka did not confirm"
                + " writes within 3 s: 0 notifications written to produce.noid, 0 bad lines skipped (of 3 read), 0 failed,"
                + " 3 handed to Kafka but not confirmed (may or may not be written), 0 lines not read (of 3)");
    }

    /**
     * The same for {@code sluice replay} (its writes ended with {@code flush()} too): a dead letter replayed through the
     * proxy ends within delivery.timeout.ms + 5 s, saying what was not confirmed, exit 2.
     */
    @Test
    @Timeout(value = 90, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aReplayKafkaNeverGivesAnIdEndsWithinTheConfirmBound() throws Exception {
        try (KafkaProxy proxy = KafkaProxy.withoutProducerIds(); EmbeddedKafka kafka = proxy.startBroker(dir.resolve("kafka"))) {
            kafka.createTopics(1, "notifications.dlq", "notifications.backfill");
            String bootstrap = proxy.bootstrap();
            // a dead letter as any producer writes it (not idempotent: no InitProducerId to wait for)
            try (KafkaProducer<byte[], byte[]> seed = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                    bootstrap, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false", ProducerConfig.ACKS_CONFIG, "all"),
                    new org.apache.kafka.common.serialization.ByteArraySerializer(),
                    new org.apache.kafka.common.serialization.ByteArraySerializer())) {
                seed.send(new org.apache.kafka.clients.producer.ProducerRecord<>("notifications.dlq",
                        "7".getBytes(StandardCharsets.UTF_8), "{\"id\":\"x\"}".getBytes(StandardCharsets.UTF_8))).get();
            }
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            long start = System.nanoTime();
            int exit = new picocli.CommandLine(new ReplayCommand()).setOut(new PrintWriter(out, true))
                    .setErr(new PrintWriter(err, true)).execute("--from", "notifications.dlq", "--progress", "NONE",
                            "-D", "bootstrap.servers=" + bootstrap, "-D", "kafka.delivery.timeout.ms=1500",
                            "-D", "kafka.request.timeout.ms=1000");
            long took = (System.nanoTime() - start) / 1_000_000;
            assertThat(exit).as(out + " / " + err).isEqualTo(2);
            assertThat(proxy.dropped()).as(out + " / " + err).isPositive();
            assertThat(took).as("ms").isLessThan(30_000);
            assertThat(err.toString()).contains("replay: Kafka did not confirm writes to notifications.backfill within"
                    + " 6 s: 0 of 1 records written, 1 not confirmed (may or may not be written)");
        }
    }

    /** And for {@code sluice chat-event}, which waited on the send's future without a bound. */
    @Test
    @Timeout(value = 90, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aChatEventKafkaNeverGivesAnIdEndsWithinTheConfirmBound() throws Exception {
        AvroTrust.ensure();
        try (KafkaProxy proxy = KafkaProxy.withoutProducerIds(); EmbeddedKafka kafka = proxy.startBroker(dir.resolve("kafka"));
             dev.sluice.testkit.InProcessSchemaRegistry registry = dev.sluice.testkit.InProcessSchemaRegistry.start()) {
            kafka.createTopics(1, "chat.events");
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            long start = System.nanoTime();
            int exit = new picocli.CommandLine(new ChatEventCommand()).setOut(new PrintWriter(out, true))
                    .setErr(new PrintWriter(err, true)).setCaseInsensitiveEnumValuesAllowed(true).execute("BLOCKED",
                            "--bot", "alerts", "--chat", "42", "-D", "bootstrap.servers=" + proxy.bootstrap(),
                            "-D", "schema.registry.url=" + registry.url(), "-D", "kafka.delivery.timeout.ms=1500",
                            "-D", "kafka.request.timeout.ms=1000");
            long took = (System.nanoTime() - start) / 1_000_000;
            assertThat(exit).as(out + " / " + err).isEqualTo(2);
            assertThat(proxy.dropped()).isPositive();
            assertThat(took).as("ms").isLessThan(30_000);
            assertThat(err.toString()).contains("chat-event: Kafka did not confirm writing BLOCKED to chat.events within 6 s"
                    + " (it may or may not be written)");
        }
    }
}
