package dev.sluice.app.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.app.tools.ProduceCommand;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.sender.SenderConfig;
import dev.sluice.sender.SenderService;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.topology.TopicBootstrap;
import dev.sluice.topology.TopologyConfig;
import dev.sluice.topology.TopologyService;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Issue 16 "done when": one id produced twice, and a repeated id inside a digest window (F4's repro), through the
 * real topology, a sender and FakeTelegram: every id ends with exactly one result. Before the fix the second
 * digest took the id {@code live-digest-dup-1} of the delivered one, the sender's DONE mark skipped it, and
 * y-1 and z-1 never got a result.
 */
class DuplicatesEndToEndIT {
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456789");

    @Test
    void everyIdEndsWithExactlyOneResultWhenIdsRepeat(@TempDir Path dir) throws Exception {
        AvroTrust.ensure();
        Topics topics = Topics.defaults();
        try (EmbeddedKafka kafka = EmbeddedKafka.start(); InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();
             FakeTelegram telegram = FakeTelegram.start(FakeTelegram.Limits.unlimited())) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
                TopicBootstrap.ensureTopics(admin, topics, 2, (short) 1);
            }
            Settings common = Settings.of(Map.of("bootstrap.servers", kafka.bootstrapServers(), "schema.registry.url", registry.url()));
            String[] connect = {"-D", "bootstrap.servers=" + kafka.bootstrapServers(), "-D", "schema.registry.url=" + registry.url()};
            List<DeliveryResult> results = new CopyOnWriteArrayList<>();
            try (TopologyService topology = new TopologyService(TopologyConfig.from(common.with("application.id", "dup-it")
                         .with("state.dir", dir.resolve("state").toString()).with("commit.interval.ms", "100")
                         .with("classify.kind.patterns", "board.*=COLLAPSIBLE").with("digest.flush.interval.ms", "1000")));
                 SenderService sender = new SenderService(SenderConfig.from(common.with("sender.instance.id", "sender-1")
                         .with("telegram.api.url", telegram.apiUrl()).with("bot.alerts.token", TOKEN)
                         .with("budget.mode", "local").with("sender.commit.interval.ms", "100")), new SimpleMeterRegistry());
                 KafkaConsumer<String, DeliveryResult> consumer = resultConsumer(kafka, registry, topics)) {
                topology.start();
                sender.start();

                // Round 1: dup-1 folds into a digest and is delivered; n-1 is written twice (a producer retry).
                produce(dir.resolve("round-1.jsonl"), connect, line("dup-1", "42", "board.updated", null),
                        line("n-1", "43", "meeting.reminder", "CRITICAL"), line("n-1", "43", "meeting.reminder", "CRITICAL"));
                awaitSettled(consumer, results, Set.of("dup-1", "n-1"));
                // Round 2, within one flush interval: dup-1 again (a replay), then y-1 and z-1 of the same digest key.
                produce(dir.resolve("round-2.jsonl"), connect, line("dup-1", "42", "board.updated", null),
                        line("y-1", "42", "board.updated", null), line("z-1", "42", "board.updated", null));
                awaitSettled(consumer, results, Set.of("dup-1", "n-1", "y-1", "z-1"));
                // Anything more (a second result for an id) would arrive within the next flushes.
                long until = System.nanoTime() + Duration.ofSeconds(3).toNanos();
                while (System.nanoTime() < until) {
                    consumer.poll(Duration.ofMillis(200)).forEach(r -> results.add(r.value()));
                }
            }
            for (String id : List.of("dup-1", "n-1", "y-1", "z-1")) {
                assertThat(results.stream().filter(r -> settles(r).contains(id))).as("results for " + id + ": " + results)
                        .singleElement().extracting(DeliveryResult::getStatus).isEqualTo(DeliveryStatus.DELIVERED);
            }
            assertThat(results).extracting(DeliveryResult::getMessageId).doesNotHaveDuplicates();
            assertThat(telegram.accepted()).as("n-1, the first digest, the digest of y-1 and z-1").hasSize(3);
        }
    }

    private static List<String> settles(DeliveryResult r) {
        return r.getFoldedIds().isEmpty() ? List.of(r.getMessageId()) : r.getFoldedIds();
    }

    private static void awaitSettled(KafkaConsumer<String, DeliveryResult> consumer, List<DeliveryResult> results, Set<String> ids) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
            consumer.poll(Duration.ofMillis(200)).forEach(r -> results.add(r.value()));
            return results.stream().flatMap(r -> settles(r).stream()).collect(java.util.stream.Collectors.toSet()).containsAll(ids);
        });
    }

    /** A `sluice produce` line; {@code eventClass} null: classified by kind pattern (board.* is COLLAPSIBLE). */
    private static String line(String id, String chat, String kind, String eventClass) {
        return "{\"id\":\"" + id + "\",\"bot_id\":\"alerts\",\"chat_id\":\"" + chat + "\",\"kind\":\"" + kind + "\",\"entity\":\"E\","
                + (eventClass == null ? "" : "\"event_class\":\"" + eventClass + "\",") + "\"text\":\"" + kind + " " + id + "\"}";
    }

    private static void produce(Path file, String[] connect, String... lines) throws Exception {
        Files.write(file, List.of(lines));
        String[] args = Stream.concat(Stream.of("--file", file.toString(), "--progress", "none"), Stream.of(connect)).toArray(String[]::new);
        assertThat(new CommandLine(new ProduceCommand()).setCaseInsensitiveEnumValuesAllowed(true).execute(args)).isZero();
    }

    private static KafkaConsumer<String, DeliveryResult> resultConsumer(EmbeddedKafka kafka, InProcessSchemaRegistry registry, Topics topics) {
        KafkaConsumer<String, DeliveryResult> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "dup-it-results", ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"), new StringDeserializer(),
                new SpecificAvroSerde<>(new CachedSchemaRegistryClient(registry.url()), DeliveryResult.class).deserializer());
        c.subscribe(List.of(topics.deliveryResults()));
        return c;
    }
}
