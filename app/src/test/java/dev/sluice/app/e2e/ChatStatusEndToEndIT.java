package dev.sluice.app.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.app.tools.ChatEventCommand;
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
 * Issue 16 "done when": chat status per (bot, chat), through the real topology, one running sender and FakeTelegram.
 * Bot {@code alerts} is blocked by chat 42 (403: BLOCKED); bot {@code news} still delivers to it; then
 * {@code sluice chat-event ACTIVE --bot alerts --chat 42} (the user wrote to the bot again) and alerts delivers to the
 * chat again, with no process restarted. Before issue 16 the sender kept its 403 per chat for all bots until restart.
 */
class ChatStatusEndToEndIT {
    private static final String ALERTS = FakeTokens.of("725000001");
    private static final String NEWS = FakeTokens.of("725000002");

    @Test
    void aChatThatBlockedOneBotStillGetsTheOtherAndGetsTheFirstAgainAfterActive(@TempDir Path dir) throws Exception {
        AvroTrust.ensure();
        Topics topics = Topics.defaults();
        try (EmbeddedKafka kafka = EmbeddedKafka.start(); InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();
             FakeTelegram telegram = FakeTelegram.start(FakeTelegram.Limits.unlimited())) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
                TopicBootstrap.ensureTopics(admin, topics, 2, (short) 1);
            }
            telegram.blockChat(ALERTS, "42");
            Settings common = Settings.of(Map.of("bootstrap.servers", kafka.bootstrapServers(), "schema.registry.url", registry.url()));
            String[] connect = {"-D", "bootstrap.servers=" + kafka.bootstrapServers(), "-D", "schema.registry.url=" + registry.url()};
            List<DeliveryResult> results = new CopyOnWriteArrayList<>();
            try (TopologyService topology = new TopologyService(TopologyConfig.from(common.with("application.id", "chat-status-it")
                         .with("state.dir", dir.resolve("state").toString()).with("commit.interval.ms", "100")
                         .with("kafka.max.task.idle.ms", "0")));
                 SenderService sender = new SenderService(SenderConfig.from(common.with("sender.instance.id", "sender-1")
                         .with("telegram.api.url", telegram.apiUrl()).with("bot.alerts.token", ALERTS)
                         .with("bot.news.token", NEWS).with("budget.mode", "local").with("sender.commit.interval.ms", "100")),
                         new SimpleMeterRegistry());
                 KafkaConsumer<String, DeliveryResult> consumer = resultConsumer(kafka, registry, topics)) {
                topology.start();
                sender.start();

                produce(dir.resolve("1.jsonl"), connect, line("a-1", "alerts"));
                assertThat(awaitResult(consumer, results, "a-1").getStatus()).isEqualTo(DeliveryStatus.BLOCKED);

                produce(dir.resolve("2.jsonl"), connect, line("n-1", "news"), line("a-2", "alerts"));
                assertThat(awaitResult(consumer, results, "n-1").getStatus()).as("bot news is not blocked by chat 42")
                        .isEqualTo(DeliveryStatus.DELIVERED);
                assertThat(awaitResult(consumer, results, "a-2").getStatus()).as("alerts is still blocked")
                        .isIn(DeliveryStatus.SKIPPED_INACTIVE, DeliveryStatus.BLOCKED);

                // The user writes to bot alerts again: its backend writes ACTIVE, the chat unblocks alerts at Telegram.
                telegram.unblockChat(ALERTS, "42");
                assertThat(new CommandLine(new ChatEventCommand()).setCaseInsensitiveEnumValuesAllowed(true).execute(
                        Stream.concat(Stream.of("ACTIVE", "--bot", "alerts", "--chat", "42"), Stream.of(connect))
                                .toArray(String[]::new))).isZero();
                // The topology applies the event in its own time (another topic): a notification it routes before that is
                // skipped by the topology itself, never by the sender; one routed after it is delivered. Bounded tries.
                DeliveryResult last = null;
                for (int i = 3; i <= 8 && (last == null || last.getStatus() != DeliveryStatus.DELIVERED); i++) {
                    produce(dir.resolve(i + ".jsonl"), connect, line("a-" + i, "alerts"));
                    last = awaitResult(consumer, results, "a-" + i);
                    if (last.getStatus() != DeliveryStatus.DELIVERED) {
                        assertThat(last.getSenderInstance()).as("only the topology may still skip: " + last).isEqualTo("topology");
                    }
                }
                assertThat(last.getStatus()).as("alerts delivers to chat 42 again, no restart").isEqualTo(DeliveryStatus.DELIVERED);
                assertThat(last.getBotId()).isEqualTo("alerts");
            }
            assertThat(telegram.callsFor("42")).extracting(FakeTelegram.Call::status).filteredOn(s -> s == 200).hasSize(2);
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

    private static String line(String id, String bot) {
        return "{\"id\":\"" + id + "\",\"bot_id\":\"" + bot + "\",\"chat_id\":\"42\",\"kind\":\"reminder\",\"event_class\":\"CRITICAL\","
                + "\"text\":\"" + bot + " " + id + "\"}";
    }

    private static void produce(Path file, String[] connect, String... lines) throws Exception {
        Files.write(file, List.of(lines));
        String[] args = Stream.concat(Stream.of("--file", file.toString(), "--progress", "none"), Stream.of(connect)).toArray(String[]::new);
        assertThat(new CommandLine(new ProduceCommand()).setCaseInsensitiveEnumValuesAllowed(true).execute(args)).isZero();
    }

    private static KafkaConsumer<String, DeliveryResult> resultConsumer(EmbeddedKafka kafka, InProcessSchemaRegistry registry, Topics topics) {
        KafkaConsumer<String, DeliveryResult> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "chat-status-it-results", ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"), new StringDeserializer(),
                new SpecificAvroSerde<>(new CachedSchemaRegistryClient(registry.url()), DeliveryResult.class).deserializer());
        c.subscribe(List.of(topics.deliveryResults()));
        return c;
    }
}
