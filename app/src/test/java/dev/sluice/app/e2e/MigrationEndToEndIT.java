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
import dev.sluice.testkit.FakeTokens;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.testkit.TelegramBehaviour;
import dev.sluice.topology.TopicBootstrap;
import dev.sluice.topology.TopologyConfig;
import dev.sluice.topology.TopologyService;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
 * Issue 16 "done when" (F11): a migration learned from a 400 {@code migrate_to_chat_id}, the sender restarted, then
 * a notification to the old id: one call to the new id, none to the old. The sender writes the migration's result
 * under the OLD chat id (key and {@code chat_id}, {@code migrated_to_chat_id} = new), where the topology routes
 * notifications to the old id, so the topology re-addresses them durably; the restarted sender's own memory is
 * empty. Before issue 16 the result named the new id, the topology learned nothing for the old id, and every
 * sender restart paid one more 400 per lane.
 */
class MigrationEndToEndIT {
    private static final String ALERTS = FakeTokens.of("726000001");

    @Test
    void aMigrationLearnedFromA400ReAddressesTheOldIdAfterASenderRestart(@TempDir Path dir) throws Exception {
        AvroTrust.ensure();
        Topics topics = Topics.defaults();
        try (EmbeddedKafka kafka = EmbeddedKafka.start(); InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();
             FakeTelegram telegram = FakeTelegram.start(FakeTelegram.Limits.unlimited())) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
                TopicBootstrap.ensureTopics(admin, topics, 2, (short) 1);
            }
            // the group became a supergroup: every call to the old id answers 400 with migrate_to_chat_id
            telegram.enqueueForChat(ALERTS, "-700", TelegramBehaviour.migrateTo(-100700L), 100);
            Settings common = Settings.of(Map.of("bootstrap.servers", kafka.bootstrapServers(), "schema.registry.url", registry.url()));
            String[] connect = {"-D", "bootstrap.servers=" + kafka.bootstrapServers(), "-D", "schema.registry.url=" + registry.url()};
            Settings senderSettings = common.with("telegram.api.url", telegram.apiUrl()).with("bot.alerts.token", ALERTS)
                    .with("budget.mode", "local").with("sender.commit.interval.ms", "100");
            List<DeliveryResult> results = new CopyOnWriteArrayList<>();
            try (TopologyService topology = new TopologyService(TopologyConfig.from(common.with("application.id", "migration-it")
                         .with("state.dir", dir.resolve("state").toString()).with("commit.interval.ms", "100")
                         .with("kafka.max.task.idle.ms", "0")));
                 KafkaConsumer<String, DeliveryResult> consumer = resultConsumer(kafka, registry, topics)) {
                topology.start();
                try (SenderService sender = new SenderService(SenderConfig.from(senderSettings.with("sender.instance.id", "sender-1")),
                        new SimpleMeterRegistry())) {
                    sender.start();
                    produce(dir.resolve("1.jsonl"), connect, line("g-1", "-700"));
                    DeliveryResult first = awaitResult(consumer, results, "g-1");
                    assertThat(first.getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
                    assertThat(first.getChatId()).as("the old id").isEqualTo("-700");
                    assertThat(first.getMigratedToChatId()).isEqualTo("-100700");
                }
                assertThat(telegram.callsFor("-700")).extracting(FakeTelegram.Call::status).containsExactly(400);
                try (SenderService sender = new SenderService(SenderConfig.from(senderSettings.with("sender.instance.id", "sender-2")),
                        new SimpleMeterRegistry())) {
                    sender.start();
                    produce(dir.resolve("2.jsonl"), connect, line("g-2", "-700"));
                    DeliveryResult second = awaitResult(consumer, results, "g-2");
                    assertThat(second.getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
                    assertThat(second.getSenderInstance()).isEqualTo("sender-2");
                }
            }
            assertThat(telegram.callsFor("-700")).as("no second call to the old id").extracting(FakeTelegram.Call::status)
                    .containsExactly(400);
            assertThat(telegram.acceptedFor("-100700")).extracting(FakeTelegram.Accepted::text)
                    .containsExactly("alerts g-1", "alerts g-2");
        }
    }

    private static DeliveryResult awaitResult(KafkaConsumer<String, DeliveryResult> consumer, List<DeliveryResult> results, String id) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
            consumer.poll(Duration.ofMillis(200)).forEach(r -> results.add(r.value()));
            return find(results, id).isPresent();
        });
        return find(results, id).orElseThrow();
    }

    private static Optional<DeliveryResult> find(List<DeliveryResult> results, String id) {
        return results.stream().filter(r -> r.getMessageId().equals(id)).findFirst();
    }

    private static String line(String id, String chat) {
        return "{\"id\":\"" + id + "\",\"bot_id\":\"alerts\",\"chat_id\":\"" + chat + "\",\"kind\":\"reminder\","
                + "\"event_class\":\"CRITICAL\",\"text\":\"alerts " + id + "\"}";
    }

    private static void produce(Path file, String[] connect, String... lines) throws Exception {
        Files.write(file, List.of(lines));
        String[] args = Stream.concat(Stream.of("--file", file.toString(), "--progress", "none"), Stream.of(connect)).toArray(String[]::new);
        assertThat(new CommandLine(new ProduceCommand()).setCaseInsensitiveEnumValuesAllowed(true).execute(args)).isZero();
    }

    private static KafkaConsumer<String, DeliveryResult> resultConsumer(EmbeddedKafka kafka, InProcessSchemaRegistry registry, Topics topics) {
        KafkaConsumer<String, DeliveryResult> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "migration-it-results", ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"), new StringDeserializer(),
                new SpecificAvroSerde<>(new CachedSchemaRegistryClient(registry.url()), DeliveryResult.class).deserializer());
        c.subscribe(List.of(topics.deliveryResults()));
        return c;
    }
}
