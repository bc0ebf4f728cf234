package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.schemas.SpecificAvroSerializer;
import dev.sluice.sender.SenderConfig;
import dev.sluice.sender.SenderService;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.topology.TopicBootstrap;
import dev.sluice.topology.TopologyConfig;
import dev.sluice.topology.TopologyService;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 20 item 4 end to end on the embedded broker: the topology with {@code text.too.long=split}, one sender and
 * FakeTelegram at Telegram's limits. A 9,000-character text arrives as 3 ordered messages (each at most 4,096
 * characters, parts 2 and 3 silent), the chat's next message after them, and {@code delivery.results} holds exactly one
 * DELIVERED result for the notification, naming part 1's message id; the three part results are on {@code delivery.parts}.
 */
class TextSplitPipelineIT {
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456789");
    private static final String BOT = "123456789";
    private static final String CHAT = "7101";

    @Test
    void aNineThousandCharacterTextArrivesAsThreeOrderedMessagesAndEndsWithOneDeliveredResult(@TempDir Path dir) throws Exception {
        AvroTrust.ensure();
        Topics topics = Topics.defaults();
        String text = longText(9_000);
        try (EmbeddedKafka kafka = EmbeddedKafka.start(); InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();
             FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram())) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
                TopicBootstrap.ensureTopics(admin, topics, 3, (short) 1);
            }
            Settings common = Settings.of(Map.of("bootstrap.servers", kafka.bootstrapServers(), "schema.registry.url", registry.url()));
            try (TopologyService topology = new TopologyService(TopologyConfig.from(common.with("application.id", "split-it")
                         .with("state.dir", dir.resolve("state").toString()).with("commit.interval.ms", "100")
                         .with("text.too.long", "split")));
                 SenderService sender = new SenderService(SenderConfig.from(common.with("sender.instance.id", "sender-1")
                         .with("telegram.api.url", telegram.apiUrl()).with("bot.alerts.token", TOKEN)
                         .with("budget.mode", "local").with("sender.commit.interval.ms", "100")), new SimpleMeterRegistry());
                 KafkaConsumer<String, DeliveryResult> results = consumer(kafka, registry, topics.deliveryResults(), "split-it-results");
                 KafkaConsumer<String, DeliveryResult> parts = consumer(kafka, registry, topics.deliveryParts(), "split-it-parts");
                 KafkaProducer<String, Notification> producer = new KafkaProducer<>(Map.of(
                         ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()), new StringSerializer(),
                         new SpecificAvroSerializer<>(new CachedSchemaRegistryClient(registry.url())))) {
                topology.start();
                sender.start();

                producer.send(new ProducerRecord<>(topics.notifications(), CHAT, notification("split-1", text))).get();
                producer.send(new ProducerRecord<>(topics.notifications(), CHAT, notification("after-1", "the next message"))).get();

                List<DeliveryResult> got = new ArrayList<>();
                await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100)).until(() -> {
                    results.poll(Duration.ofMillis(200)).forEach(r -> got.add(r.value()));
                    return got.stream().anyMatch(r -> r.getMessageId().equals("split-1"))
                            && got.stream().anyMatch(r -> r.getMessageId().equals("after-1"));
                });
                // a second result would be written within a commit interval or two of the first: look once more
                results.poll(Duration.ofSeconds(2)).forEach(r -> got.add(r.value()));
                assertThat(got).extracting(DeliveryResult::getMessageId).as("one result per notification, none per part")
                        .containsExactlyInAnyOrder("split-1", "after-1");

                List<FakeTelegramAccepted> accepted = telegram.acceptedFor(CHAT);
                assertThat(accepted).hasSize(4);
                assertThat(accepted.subList(0, 3)).allSatisfy(a -> assertThat(a.text().length()).isBetween(1, 4096));
                assertThat(String.join("\n\n", accepted.subList(0, 3).stream().map(FakeTelegramAccepted::text).toList()))
                        .as("the parts in order make the text").isEqualTo(text);
                assertThat(accepted.get(3).text()).isEqualTo("the next message");
                assertThat(accepted.subList(0, 3)).extracting(a -> telegram.message(BOT, CHAT, a.messageId()).orElseThrow().silent())
                        .containsExactly(false, true, true);

                DeliveryResult split = got.stream().filter(r -> r.getMessageId().equals("split-1")).findFirst().orElseThrow();
                assertThat(split.getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
                assertThat(split.getProviderMessageId()).as("part 1's message").isEqualTo(accepted.get(0).messageId());
                assertThat(split.getPart()).isNull();
                assertThat(split.getAttempts()).isEqualTo(3);

                List<DeliveryResult> partResults = new ArrayList<>();
                await().atMost(Duration.ofSeconds(30)).until(() -> {
                    parts.poll(Duration.ofMillis(200)).forEach(r -> partResults.add(r.value()));
                    return partResults.size() >= 3;
                });
                assertThat(partResults).extracting(DeliveryResult::getMessageId)
                        .containsExactlyInAnyOrder("split-1#1/3", "split-1#2/3", "split-1#3/3");
                assertThat(partResults).extracting(DeliveryResult::getStatus).containsOnly(DeliveryStatus.DELIVERED);
            }
        }
    }

    /** Paragraphs of about 230 characters, cut to {@code length}. */
    private static String longText(int length) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; b.length() < length; i++) {
            b.append("Paragraph ").append(i).append(": ").append("lorem ipsum dolor sit amet ".repeat(8).trim()).append("\n\n");
        }
        return b.substring(0, length).trim();
    }

    private static Notification notification(String id, String text) {
        return Notification.newBuilder().setId(id).setBotId("alerts").setChatId(CHAT).setKind("report.daily")
                .setEventClass(NotificationClass.CRITICAL).setText(text).setCreatedAt(Instant.now()).build();
    }

    private static KafkaConsumer<String, DeliveryResult> consumer(EmbeddedKafka kafka, InProcessSchemaRegistry registry,
                                                                  String topic, String group) {
        KafkaConsumer<String, DeliveryResult> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                kafka.bootstrapServers(), ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"), new StringDeserializer(),
                new SpecificAvroSerde<>(new CachedSchemaRegistryClient(registry.url()), DeliveryResult.class).deserializer());
        c.subscribe(List.of(topic));
        return c;
    }
}
