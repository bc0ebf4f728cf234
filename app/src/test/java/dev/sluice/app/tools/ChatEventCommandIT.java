package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.ChatEvent;
import dev.sluice.avro.ChatEventType;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.avro.Preference;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.topology.TopicBootstrap;
import dev.sluice.topology.TopologyConfig;
import dev.sluice.topology.TopologyService;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code sluice chat-event} against the embedded KRaft broker and the in-process registry: it writes the
 * chat.events and preferences contracts (docs/chat-events.md), and the real topology acts on what it wrote:
 * a chat that blocked bot {@code alerts} still receives from bot {@code news}, and a group migration applies
 * to every bot.
 */
class ChatEventCommandIT {
    private static final Topics TOPICS = Topics.defaults();
    private static EmbeddedKafka kafka;
    private static InProcessSchemaRegistry registry;
    private static CachedSchemaRegistryClient client;

    @TempDir
    Path stateDir;

    @BeforeAll
    static void start() {
        AvroTrust.ensure();
        kafka = EmbeddedKafka.start();
        registry = InProcessSchemaRegistry.start();
        client = new CachedSchemaRegistryClient(registry.url());
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.bootstrapServers()))) {
            TopicBootstrap.ensureTopics(admin, TOPICS, 2, (short) 1);
        }
    }

    @AfterAll
    static void stop() {
        registry.close();
        kafka.close();
    }

    private record Run(int exit, String out, String err) {
    }

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("-D", "bootstrap.servers=" + kafka.bootstrapServers(), "-D", "schema.registry.url=" + registry.url()));
        int exit = new CommandLine(new ChatEventCommand()).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                .setCaseInsensitiveEnumValuesAllowed(true).execute(all.toArray(String[]::new));
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void writesTheContractsAndTheTopologyActsOnThemPerBot() throws Exception {
        Run bad = run("MIGRATED", "--bot", "alerts", "--chat", "-4001");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).contains("--new-chat is required for MIGRATED");
        Run badAt = run("ACTIVE", "--bot", "alerts", "--chat", "1", "--at", "yesterday");
        assertThat(badAt.err()).contains("--at 'yesterday' is not an ISO-8601 instant");

        assertThat(run("BLOCKED", "--bot", "alerts", "--chat", " @MyGroup ").exit()).isZero();
        Run migrated = run("MIGRATED", "--bot", "*", "--chat", "-4001", "--new-chat", "-1004001");
        assertThat(migrated.exit()).as(migrated.err()).isZero();
        assertThat(migrated.out()).contains("chat-event: MIGRATED written to chat.events-").contains("key -4001");
        assertThat(run("DIGEST_OPT_OUT", "--user", "u-1").exit()).isZero();

        List<ConsumerRecord<String, ChatEvent>> events = read(TOPICS.chatEvents(), ChatEvent.class, 2);
        assertThat(events).extracting(ConsumerRecord::key).containsExactlyInAnyOrder("@mygroup", "-4001");
        ChatEvent blocked = events.stream().filter(e -> e.key().equals("@mygroup")).findFirst().orElseThrow().value();
        assertThat(blocked.getType()).isEqualTo(ChatEventType.BLOCKED);
        assertThat(blocked.getBotId()).isEqualTo("alerts");
        assertThat(blocked.getChatId()).isEqualTo("@mygroup");
        ChatEvent moved = events.stream().filter(e -> e.key().equals("-4001")).findFirst().orElseThrow().value();
        assertThat(moved.getBotId()).isEqualTo("*");
        assertThat(moved.getNewChatId()).isEqualTo("-1004001");
        List<ConsumerRecord<String, Preference>> prefs = read(TOPICS.preferences(), Preference.class, 1);
        assertThat(prefs.get(0).key()).isEqualTo("u-1");
        assertThat(prefs.get(0).value().getDigestOptOut()).isTrue();

        TopologyConfig config = TopologyConfig.from(Settings.of(Map.of("bootstrap.servers", kafka.bootstrapServers(),
                "schema.registry.url", registry.url(), "application.id", "chat-event-it", "state.dir", stateDir.toString(),
                "commit.interval.ms", "100")));
        try (TopologyService topology = new TopologyService(config)) {
            topology.start();
            await().atMost(Duration.ofSeconds(60)).until(() -> topology.state() == KafkaStreams.State.RUNNING);
            try (KafkaProducer<String, SpecificRecord> producer = new KafkaProducer<>(KafkaClients.producer(
                    Settings.of(Map.of("bootstrap.servers", kafka.bootstrapServers())), "it"), new StringSerializer(),
                    new dev.sluice.schemas.SpecificAvroSerializer<>(client))) {
                for (Notification n : List.of(notification("a-1", "alerts", "@MYGROUP"), notification("b-1", "news", "@mygroup"),
                        notification("m-1", "alerts", "-4001"), notification("m-2", "news", "-4001"))) {
                    producer.send(new ProducerRecord<>(TOPICS.notifications(), n.getChatId(), n)).get();
                }
            }
            List<ConsumerRecord<String, OutboundMessage>> out = read(TOPICS.outboxLive(), OutboundMessage.class, 3);
            assertThat(out).extracting(r -> r.value().getId() + "->" + r.key())
                    .containsExactlyInAnyOrder("b-1->@mygroup", "m-1->-1004001", "m-2->-1004001");
            List<ConsumerRecord<String, DeliveryResult>> results = read(TOPICS.deliveryResults(), DeliveryResult.class, 1);
            assertThat(results.get(0).value().getMessageId()).isEqualTo("a-1");
            assertThat(results.get(0).value().getStatus()).isEqualTo(DeliveryStatus.SKIPPED_INACTIVE);
        }
    }

    private static Notification notification(String id, String bot, String chat) {
        return Notification.newBuilder().setId(id).setBotId(bot).setChatId(chat).setKind("quake.alert")
                .setEventClass(NotificationClass.CRITICAL).setText("quake " + id).setCreatedAt(Instant.now()).build();
    }

    private static <T extends SpecificRecord> List<ConsumerRecord<String, T>> read(String topic, Class<T> type, int expected) {
        var values = new SpecificAvroSerde<>(client, type).deserializer();
        List<ConsumerRecord<String, T>> out = new ArrayList<>();
        try (KafkaConsumer<String, T> consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "it-read-" + topic + "-" + System.nanoTime(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"), new StringDeserializer(), values)) {
            consumer.subscribe(List.of(topic));
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
                return out.size() >= expected;
            });
            consumer.poll(Duration.ofMillis(500)).forEach(out::add);
        }
        assertThat(out).as("records in " + topic).hasSize(expected);
        return out;
    }
}
