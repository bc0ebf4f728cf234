package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Lane;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.sender.SenderConfig;
import dev.sluice.sender.SenderService;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.testkit.TelegramBehaviour;
import dev.sluice.topology.TopicBootstrap;
import dev.sluice.topology.TopologyConfig;
import dev.sluice.topology.TopologyService;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Issue 6, "done when": {@code sluice replay} moves the FAILED results of a run back through the pipeline.
 * A run through the real topology and a sender: {@code sluice produce} writes 20 notifications to 10 chats;
 * the provider answers 400 "chat not found" for two chats (4 FAILED results) while they are misconfigured.
 * Then {@code sluice replay --from delivery.results --filter status=FAILED} sends exactly those 4 through
 * notifications.backfill, the topology routes them to outbox.backfill and the sender delivers them: 4 new
 * DELIVERED results on the BACKFILL lane, nothing else re-sent.
 */
class ReplayPipelineIT {
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456789");
    private static final List<String> BROKEN_CHATS = List.of("9001", "9002");

    @Test
    void replayMovesTheFailedResultsOfARunBackThroughThePipeline(@TempDir Path dir) throws Exception {
        AvroTrust.ensure();
        Topics topics = Topics.defaults();
        try (EmbeddedKafka kafka = EmbeddedKafka.start(); InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();
             FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.unlimited())) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
                TopicBootstrap.ensureTopics(admin, topics, 3, (short) 1);
            }
            BROKEN_CHATS.forEach(chat -> telegram.enqueueForChat("123456789", chat, TelegramBehaviour.chatNotFound(), 2));
            Settings common = Settings.of(Map.of("bootstrap.servers", kafka.bootstrapServers(), "schema.registry.url", registry.url()));
            String[] connect = {"-D", "bootstrap.servers=" + kafka.bootstrapServers(), "-D", "schema.registry.url=" + registry.url()};

            List<DeliveryResult> results = new CopyOnWriteArrayList<>();
            try (TopologyService topology = new TopologyService(TopologyConfig.from(common.with("application.id", "replay-it")
                         .with("state.dir", dir.resolve("state").toString()).with("commit.interval.ms", "100")));
                 SenderService sender = new SenderService(SenderConfig.from(common.with("sender.instance.id", "sender-1")
                         .with("telegram.api.url", telegram.apiUrl()).with("bot.alerts.token", TOKEN)
                         .with("budget.mode", "local").with("sender.commit.interval.ms", "100")), new SimpleMeterRegistry());
                 KafkaConsumer<String, DeliveryResult> consumer = resultConsumer(kafka, registry, topics)) {
                topology.start();
                sender.start();

                // The run: 20 notifications, 2 per chat, written by `sluice produce`.
                Path file = dir.resolve("run.jsonl");
                List<String> lines = new ArrayList<>();
                Instant expires = Instant.now().plus(Duration.ofMinutes(10));
                for (int i = 0; i < 20; i++) {
                    String chat = Integer.toString(9001 + i % 10);
                    lines.add("{\"id\":\"run-" + i + "\",\"bot_id\":\"alerts\",\"chat_id\":\"" + chat + "\",\"kind\":\"meeting.reminder\","
                            + "\"event_class\":\"CRITICAL\",\"text\":\"reminder #" + i + "\",\"expires_at\":\"" + expires + "\"}");
                }
                Files.write(file, lines);
                assertThat(execute(new ProduceCommand(), "--file", file.toString(), "--progress", "none", connect[0], connect[1], connect[2], connect[3])).isZero();

                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
                    consumer.poll(Duration.ofMillis(200)).forEach(r -> results.add(r.value()));
                    return results.size() >= 20;
                });
                List<String> failed = results.stream().filter(r -> r.getStatus() == DeliveryStatus.FAILED).map(DeliveryResult::getMessageId).toList();
                assertThat(failed).containsExactlyInAnyOrder("run-0", "run-10", "run-1", "run-11");
                assertThat(results).filteredOn(r -> r.getStatus() == DeliveryStatus.DELIVERED).hasSize(16);
                int acceptedBefore = telegram.accepted().size();

                // The chats are fixed; replay the FAILED ones.
                StringWriter out = new StringWriter();
                StringWriter err = new StringWriter();
                int exit = new CommandLine(new ReplayCommand()).setCaseInsensitiveEnumValuesAllowed(true).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                        .execute("--from", topics.deliveryResults(), "--to", topics.notificationsBackfill(), "--filter", "status=FAILED",
                                "--progress", "plain", connect[0], connect[1], connect[2], connect[3]);
                assertThat(exit).as(out + "\n" + err).isZero();
                assertThat(out.toString()).contains("4 results matched (status=FAILED)").contains("4 written to notifications.backfill");
                assertThat(err.toString()).contains("replay: writing notifications.backfill: 4/4 records (100%)");

                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
                    consumer.poll(Duration.ofMillis(200)).forEach(r -> results.add(r.value()));
                    return results.size() >= 24;
                });
                consumer.poll(Duration.ofSeconds(1)).forEach(r -> results.add(r.value()));
                List<DeliveryResult> replayed = results.subList(20, results.size());
                assertThat(replayed).hasSize(4).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED && r.getLane() == Lane.BACKFILL);
                assertThat(replayed).extracting(DeliveryResult::getMessageId).containsExactlyInAnyOrder("run-0", "run-10", "run-1", "run-11");
                assertThat(telegram.accepted()).hasSize(acceptedBefore + 4);
                assertThat(telegram.acceptedFor("9001")).extracting(FakeTelegramAccepted::text).containsExactly("reminder #0", "reminder #10");
            }
        }
    }

    private static int execute(Object command, String... args) {
        return new CommandLine(command).setCaseInsensitiveEnumValuesAllowed(true).execute(args);
    }

    private static KafkaConsumer<String, DeliveryResult> resultConsumer(EmbeddedKafka kafka, InProcessSchemaRegistry registry, Topics topics) {
        KafkaConsumer<String, DeliveryResult> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "replay-it-results", ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"), new StringDeserializer(),
                new SpecificAvroSerde<>(new CachedSchemaRegistryClient(registry.url()), DeliveryResult.class).deserializer());
        c.subscribe(List.of(topics.deliveryResults()));
        return c;
    }
}
