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
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code sluice replay}'s {@code --filter} and {@code --since} values against the embedded KRaft broker and the
 * in-process schema registry: a status that no DeliveryResult can have is a usage error naming the option, the value
 * and the allowed values (it used to match nothing, exit 0); {@code --since} takes a duration back from now as well
 * as an instant. Two FAILED results: one timestamped 3 hours ago, one now; both notifications are in their topic.
 */
class ReplayOptionsIT {
    private static final Topics TOPICS = Topics.defaults();
    private static final Duration OLD_RESULT_AGE = Duration.ofHours(3);
    private static EmbeddedKafka kafka;
    private static InProcessSchemaRegistry registry;

    @TempDir
    static Path dir;

    @BeforeAll
    static void start() throws Exception {
        AvroTrust.ensure();
        kafka = EmbeddedKafka.start();
        kafka.createTopics(1, TOPICS.notifications(), TOPICS.notificationsBackfill(), TOPICS.deliveryResults());
        registry = InProcessSchemaRegistry.start();
        Path file = dir.resolve("events.jsonl");
        Files.write(file, List.of(
                "{\"id\":\"o-old\",\"bot_id\":\"alerts\",\"chat_id\":\"7\",\"kind\":\"k\",\"text\":\"old\"}",
                "{\"id\":\"o-new\",\"bot_id\":\"alerts\",\"chat_id\":\"7\",\"kind\":\"k\",\"text\":\"new\"}"));
        assertThat(run(new ProduceCommand(), "--file", file.toString(), "--progress", "none").exit()).isZero();
        Map<String, Object> props = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, DeliveryResult> producer = new KafkaProducer<>(props, new StringSerializer(),
                new SpecificAvroSerde<>(new CachedSchemaRegistryClient(registry.url()), DeliveryResult.class).serializer())) {
            long nowMs = System.currentTimeMillis();
            producer.send(new ProducerRecord<>(TOPICS.deliveryResults(), null, nowMs - OLD_RESULT_AGE.toMillis(), "7", failed("o-old")));
            producer.send(new ProducerRecord<>(TOPICS.deliveryResults(), null, nowMs, "7", failed("o-new")));
            producer.flush();
        }
    }

    @AfterAll
    static void stop() {
        registry.close();
        kafka.close();
    }

    private record Run(int exit, String out, String err) {
    }

    private static Run run(Object command, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("-D", "bootstrap.servers=" + kafka.bootstrapServers(), "-D", "schema.registry.url=" + registry.url()));
        int exit = new CommandLine(command).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                .setCaseInsensitiveEnumValuesAllowed(true).execute(all.toArray(String[]::new));
        return new Run(exit, out.toString(), err.toString());
    }

    private static Run replay(String... args) {
        List<String> all = new ArrayList<>(List.of("--from", TOPICS.deliveryResults(), "--dry-run", "--progress", "none"));
        all.addAll(List.of(args));
        return run(new ReplayCommand(), all.toArray(String[]::new));
    }

    @Test
    void aStatusNoResultCanHaveIsAUsageErrorNamingTheOptionTheValueAndTheAllowedOnes() {
        Run typo = replay("--filter", "status=FAILD");
        assertThat(typo.exit()).as(typo.out() + typo.err()).isEqualTo(2);
        assertThat(typo.err()).contains("--filter status=FAILD: 'FAILD' is not a status of a DeliveryResult; allowed: "
                + "DELIVERED, BLOCKED, SKIPPED_INACTIVE, FAILED, UNCERTAIN, EXPIRED");
        assertThat(typo.out()).doesNotContain("results matched");

        Run oneOfTwo = replay("--filter", "status=FAILED,EXPIRD");
        assertThat(oneOfTwo.exit()).isEqualTo(2);
        assertThat(oneOfTwo.err()).contains("--filter status=FAILED,EXPIRD: 'EXPIRD' is not a status");

        Run lane = replay("--filter", "lane=live"); // matching is exact: the symbols are upper case
        assertThat(lane.exit()).isEqualTo(2);
        assertThat(lane.err()).contains("--filter lane=live: 'live' is not a lane of a DeliveryResult; allowed: LIVE, BACKFILL");

        Run good = replay("--filter", "status=FAILED,EXPIRED", "--filter", "lane=LIVE", "--filter", "bot_id=alerts");
        assertThat(good.exit()).as(good.out() + good.err()).isZero();
        assertThat(good.out()).contains("2 results matched");
    }

    @Test
    void sinceTakesAnInstantOrADurationBackFromNowAndNamesABadValue() {
        Run hour = replay("--filter", "status=FAILED", "--since", "1h");
        assertThat(hour.exit()).as(hour.out() + hour.err()).isZero();
        assertThat(hour.out()).contains("1 results matched").contains("1 notifications found");

        Run minutes = replay("--filter", "status=FAILED", "--since", "240m");
        assertThat(minutes.out()).as(minutes.err()).contains("2 results matched");

        Run iso = replay("--filter", "status=FAILED", "--since", "PT2H30M");
        assertThat(iso.out()).as(iso.err()).contains("1 results matched");

        Run instant = replay("--filter", "status=FAILED", "--since", Instant.now().minus(Duration.ofHours(4)).toString());
        assertThat(instant.out()).as(instant.err()).contains("2 results matched");

        Run bad = replay("--since", "3 hours");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).contains("--since '3 hours': expected an ISO-8601 instant (2025-07-30T00:00:00Z) or an amount"
                + " ago (90s, 10m, 2h, 1d)");
        assertThat(bad.out()).doesNotContain("results matched");

        Run help = run(new ReplayCommand(), "--help");
        assertThat(help.out()).contains("--since").contains("10m").contains("PT30M");
    }

    private static DeliveryResult failed(String id) {
        return DeliveryResult.newBuilder().setMessageId(id).setBotId("alerts").setChatId("7").setStatus(DeliveryStatus.FAILED)
                .setLane(Lane.LIVE).setResultAt(Instant.now()).setReason("Bad Request: chat not found").build();
    }
}
