package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.Notification;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.InProcessSchemaRegistry;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code sluice produce} on input with bytes that are not UTF-8, from a file and from stdin, against the embedded KRaft
 * broker and the in-process registry: the bad line is reported (number and byte offset, never the bytes) and skipped
 * like any bad line (exit 1), the lines around it are written, and nothing with U+FFFD reaches the topic. Before, a
 * file failed whole ({@code MalformedInputException}, exit 2) and stdin sent the line with U+FFFD in it.
 */
class ProduceUtf8IT {
    private static EmbeddedKafka kafka;
    private static InProcessSchemaRegistry registry;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() {
        AvroTrust.ensure();
        kafka = EmbeddedKafka.start();
        kafka.createTopics(1, "produce.file", "produce.stdin");
        registry = InProcessSchemaRegistry.start();
    }

    @AfterAll
    static void stop() {
        registry.close();
        kafka.close();
    }

    private record Run(int exit, String out, String err) {
    }

    private static byte[] input() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes("{\"id\":\"u-1\",\"bot_id\":\"alerts\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"first\"}\n".getBytes(StandardCharsets.UTF_8));
        b.writeBytes("{\"id\":\"u-2\",\"bot_id\":\"alerts\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"".getBytes(StandardCharsets.UTF_8));
        b.writeBytes(new byte[]{(byte) 0xC3, (byte) 0x28}); // a lead byte without its continuation
        b.writeBytes("\"}\r\n".getBytes(StandardCharsets.UTF_8));
        b.writeBytes("{\"id\":\"u-3\",\"bot_id\":\"alerts\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"caf\u00e9\"}\n".getBytes(StandardCharsets.UTF_8));
        return b.toByteArray();
    }

    private static Run run(String topic, String file, InputStream stdin) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        InputStream before = System.in;
        System.setIn(stdin);
        try {
            int exit = new CommandLine(new ProduceCommand()).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                    .execute("--file", file, "--topic", topic, "--progress", "NONE",
                            "-D", "bootstrap.servers=" + kafka.bootstrapServers(), "-D", "schema.registry.url=" + registry.url());
            return new Run(exit, out.toString(), err.toString());
        } finally {
            System.setIn(before);
        }
    }

    @Test
    void aFileWithAnInvalidLineWritesTheOthersAndNamesTheLine() throws Exception {
        Path file = dir.resolve("latin1.jsonl");
        Files.write(file, input());
        check(run("produce.file", file.toString(), new ByteArrayInputStream(new byte[0])), "produce.file");
    }

    @Test
    void stdinWithAnInvalidLineWritesTheOthersAndNamesTheLine() {
        check(run("produce.stdin", "-", new ByteArrayInputStream(input())), "produce.stdin");
    }

    private static void check(Run r, String topic) {
        assertThat(r.exit()).as(r.err()).isEqualTo(1);
        assertThat(r.err().lines()).containsExactly("produce: skipped line 2, field '(line)': invalid UTF-8 at byte offset 63"
                + " of the line (0xC3; offsets from 0, 67 bytes in the line); not read as JSON");
        assertThat(r.out()).contains("produce: 2 notifications written to " + topic + ", 1 bad lines skipped (of 3)");
        List<Notification> written = read(topic, 2);
        assertThat(written).extracting(n -> n.getId() + "=" + n.getText()).containsExactly("u-1=first", "u-3=caf\u00e9");
    }

    private static List<Notification> read(String topic, int expected) {
        var values = new SpecificAvroSerde<>(new CachedSchemaRegistryClient(registry.url()), Notification.class).deserializer();
        Map<String, Object> p = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "it-read-" + topic + "-" + System.nanoTime(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<Notification> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (out.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(c -> out.add(values.deserialize(topic, c.value())));
            }
            consumer.poll(Duration.ofMillis(300)).forEach(c -> out.add(values.deserialize(topic, c.value())));
        }
        return out;
    }
}
