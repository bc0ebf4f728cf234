package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Lane;
import dev.sluice.config.Topics;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.InProcessSchemaRegistry;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * What {@code sluice results} and {@code sluice replay} do with inputs a newcomer gets wrong, against the embedded
 * KRaft broker and the in-process schema registry: a registry or topic none of whose records decode is an error
 * (exit 2) naming the registry and the reason, not "0 shown"; {@code --since} before 1970 or a huge amount reads from
 * the beginning; text output escapes control characters so an id cannot forge a line; a dead-letter filter on a
 * header the topology never writes is a usage error. The results topic holds two decodable results (one with a
 * newline in its id) and one record of garbage.
 */
class ToolInputsIT {
    private static final Topics TOPICS = Topics.defaults();
    private static final String FORGED_ID = "nl-2\nFAKE DELIVERED";
    private static EmbeddedKafka kafka;
    private static InProcessSchemaRegistry registry;
    private static InProcessSchemaRegistry emptyRegistry;

    @TempDir
    static Path dir;

    @BeforeAll
    static void start() throws Exception {
        AvroTrust.ensure();
        kafka = EmbeddedKafka.start();
        kafka.createTopics(1, TOPICS.notifications(), TOPICS.notificationsBackfill(), TOPICS.deliveryResults(), TOPICS.dlq());
        registry = InProcessSchemaRegistry.start();
        emptyRegistry = InProcessSchemaRegistry.start(); // an HTTP registry that never saw these schemas
        Path file = dir.resolve("events.jsonl");
        Files.write(file, List.of("{\"id\":\"i-1\",\"bot_id\":\"alerts\",\"chat_id\":\"7\",\"kind\":\"k\",\"text\":\"one\"}"));
        assertThat(run(new ProduceCommand(), "--file", file.toString(), "--progress", "none").exit()).isZero();
        Map<String, Object> props = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, DeliveryResult> producer = new KafkaProducer<>(props, new StringSerializer(),
                new SpecificAvroSerde<>(new CachedSchemaRegistryClient(registry.url()), DeliveryResult.class).serializer());
             KafkaProducer<byte[], byte[]> raw = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(TOPICS.deliveryResults(), "7", failed("i-1")));
            producer.send(new ProducerRecord<>(TOPICS.deliveryResults(), "7", failed(FORGED_ID)));
            producer.flush();
            raw.send(new ProducerRecord<>(TOPICS.deliveryResults(), "7".getBytes(StandardCharsets.UTF_8),
                    "not avro".getBytes(StandardCharsets.UTF_8)));
            raw.flush();
        }
    }

    @AfterAll
    static void stop() {
        emptyRegistry.close();
        registry.close();
        kafka.close();
    }

    private record Run(int exit, String out, String err) {
    }

    private static Run run(Object command, String... args) {
        return runWith(registry.url(), command, args);
    }

    private static Run runWith(String registryUrl, Object command, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("-D", "bootstrap.servers=" + kafka.bootstrapServers(), "-D", "schema.registry.url=" + registryUrl));
        int exit = new CommandLine(command).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                .setCaseInsensitiveEnumValuesAllowed(true).execute(all.toArray(String[]::new));
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void noRecordDecodingIsAnErrorNamingTheRegistryAndTheReasonSomeDecodingKeepsTheCount() {
        Run wrongRegistry = runWith(emptyRegistry.url(), new ResultsCommand());
        assertThat(wrongRegistry.exit()).as(wrongRegistry.out() + wrongRegistry.err()).isEqualTo(2);
        assertThat(wrongRegistry.err()).contains("none of the 3 records read from " + TOPICS.deliveryResults())
                .contains(emptyRegistry.url()).contains("first error: ").doesNotContain("\tat ");
        assertThat(wrongRegistry.err().strip().lines()).hasSize(1);
        assertThat(wrongRegistry.out()).doesNotContain("shown");

        Run otherSchema = run(new ResultsCommand(), "-D", "topic.delivery.results=" + TOPICS.notifications());
        assertThat(otherSchema.exit()).as(otherSchema.out() + otherSchema.err()).isEqualTo(2);
        assertThat(otherSchema.err()).contains("none of the 1 records read from " + TOPICS.notifications());

        Run replay = runWith(emptyRegistry.url(), new ReplayCommand(), "--from", TOPICS.deliveryResults(), "--dry-run", "--progress", "none");
        assertThat(replay.exit()).as(replay.out() + replay.err()).isEqualTo(2);
        assertThat(replay.err()).contains("none of the 3 records read from " + TOPICS.deliveryResults()).contains(emptyRegistry.url());
        assertThat(replay.out()).doesNotContain("results matched");

        Run some = run(new ResultsCommand());
        assertThat(some.exit()).as(some.out() + some.err()).isZero();
        assertThat(some.out()).contains("results: 2 shown (FAILED 2)").contains("1 undecodable records skipped");
    }

    @Test
    void sinceBefore1970OrAHugeAmountReadsFromTheBeginning() {
        for (String since : List.of("30000d", "1969-12-31T00:00:00Z", "2562047788015d", "P40000D", "106751991167301d")) {
            Run results = run(new ResultsCommand(), "--since", since);
            assertThat(results.exit()).as(since + ": " + results.out() + results.err()).isZero();
            assertThat(results.out()).as(since).contains("results: 2 shown (FAILED 2)");
            Run replay = run(new ReplayCommand(), "--from", TOPICS.deliveryResults(), "--dry-run", "--progress", "none", "--since", since);
            assertThat(replay.exit()).as(since + ": " + replay.out() + replay.err()).isIn(0, 1); // 1: the forged id has no notification
            assertThat(replay.out()).as(since).contains("2 results matched");
        }
    }

    @Test
    void textOutputEscapesControlCharactersSoAnIdCannotForgeALine() {
        Run text = run(new ResultsCommand());
        assertThat(text.out()).contains("id=nl-2\\nFAKE DELIVERED chat=7");
        assertThat(text.out().lines()).noneMatch(l -> l.startsWith("FAKE"));
        assertThat(text.out().lines()).hasSize(3); // two results and the summary

        Run json = run(new ResultsCommand(), "--json");
        assertThat(json.out()).contains("\"message_id\":\"nl-2\\nFAKE DELIVERED\"");
        assertThat(ResultLine.escape("a\tb\u0007c\\d\re")).isEqualTo("a\\tb\\u0007c\\\\d\\re");
    }

    @Test
    void aDeadLetterFilterOnAHeaderTheTopologyNeverWritesIsAUsageError() {
        Run unknown = run(new ReplayCommand(), "--from", TOPICS.dlq(), "--dry-run", "--progress", "none", "--filter", "nosuchheader=x");
        assertThat(unknown.exit()).as(unknown.out() + unknown.err()).isEqualTo(2);
        assertThat(unknown.err()).contains("--filter nosuchheader=x: no such dead-letter header (headers: reason, error.class, "
                + "source.topic, source.partition, source.offset");
        assertThat(unknown.out()).doesNotContain("dead letters matched");

        for (String name : List.of("reason", "sluice.dlq.error.class", "source.topic")) {
            Run known = run(new ReplayCommand(), "--from", TOPICS.dlq(), "--dry-run", "--progress", "none", "--filter", name + "=x");
            assertThat(known.exit()).as(name + ": " + known.out() + known.err()).isZero();
            assertThat(known.out()).contains("0 dead letters matched");
        }
    }

    private static DeliveryResult failed(String id) {
        return DeliveryResult.newBuilder().setMessageId(id).setBotId("alerts").setChatId("7").setStatus(DeliveryStatus.FAILED)
                .setLane(Lane.LIVE).setResultAt(Instant.now()).setReason("Bad Request: chat not found").build();
    }
}
