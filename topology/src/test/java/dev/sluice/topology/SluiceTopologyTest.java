package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.avro.Lane;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.config.Settings;
import dev.sluice.schemas.InMemorySchemaRegistryClient;
import dev.sluice.schemas.SchemaRegistryClient;
import dev.sluice.schemas.SchemaRegistryException;
import dev.sluice.schemas.SpecificAvroDeserializer;
import dev.sluice.schemas.SpecificAvroSerializer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import org.apache.avro.Schema;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SluiceTopologyTest {
    private static final Instant START = Instant.parse("2025-07-30T00:00:00Z");

    @TempDir
    Path stateDir;

    private final InMemorySchemaRegistryClient registry = new InMemorySchemaRegistryClient();
    private final SpecificAvroSerializer<Notification> notificationSerializer = new SpecificAvroSerializer<>(registry);
    private TopologyTestDriver driver;
    private TestInputTopic<byte[], byte[]> live;
    private TestInputTopic<byte[], byte[]> backfill;
    private TestOutputTopic<String, OutboundMessage> outboxLive;
    private TestOutputTopic<String, OutboundMessage> outboxBackfill;
    private TestOutputTopic<byte[], byte[]> dlq;

    private void start(SchemaRegistryClient topologyRegistry) {
        TopologyConfig config = TopologyConfig.from(Settings.of(Map.of(
                "bootstrap.servers", "unused:9092", "schema.registry.url", "http://unused:8081",
                "state.dir", stateDir.toString())));
        Properties props = config.streamsProperties();
        driver = new TopologyTestDriver(SluiceTopology.build(config, topologyRegistry), props, START);
        live = driver.createInputTopic("notifications", new ByteArraySerializer(), new ByteArraySerializer());
        backfill = driver.createInputTopic("notifications.backfill", new ByteArraySerializer(), new ByteArraySerializer());
        SpecificAvroDeserializer<OutboundMessage> outbound = new SpecificAvroDeserializer<>(registry, OutboundMessage.class);
        outboxLive = driver.createOutputTopic("outbox.live", new StringDeserializer(), outbound);
        outboxBackfill = driver.createOutputTopic("outbox.backfill", new StringDeserializer(), outbound);
        dlq = driver.createOutputTopic("notifications.dlq", new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    private void start() {
        start(registry);
    }

    @AfterEach
    void close() {
        if (driver != null) {
            driver.close();
        }
    }

    static Notification.Builder notification(String id, String chatId) {
        return Notification.newBuilder().setId(id).setBotId("alerts").setChatId(chatId).setKind("quake.alert")
                .setText("M5.1 Kamchatka, event " + id).setCreatedAt(START.minusSeconds(5));
    }

    private byte[] avro(Notification n) {
        return notificationSerializer.serialize("notifications", n);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String header(Headers headers, String key) {
        return new String(headers.lastHeader(key).value(), StandardCharsets.UTF_8);
    }

    @Test
    void notAvroAndAMissingChatIdAreDeadLetteredAndTheNextValidRecordGoesThrough() {
        start();
        byte[] json = utf8("{\"id\":\"n-1\",\"chat_id\":\"42\",\"text\":\"hi\"}");
        Headers traced = new RecordHeaders().add("trace-id", utf8("t-1"));
        live.pipeInput(new TestRecord<>(utf8("key-1"), json, traced, START));
        byte[] noChat = avro(notification("n-2", null).build());
        live.pipeInput(utf8("key-2"), noChat);
        live.pipeInput(utf8("key-3"), avro(notification("n-3", "42").build()));

        List<TestRecord<byte[], byte[]>> dead = dlq.readRecordsToList();
        assertThat(dead).hasSize(2);

        TestRecord<byte[], byte[]> notAvro = dead.get(0);
        assertThat(notAvro.key()).isEqualTo(utf8("key-1"));
        assertThat(notAvro.value()).isEqualTo(json);
        assertThat(header(notAvro.headers(), DeadLetterHeaders.REASON))
                .isEqualTo("not Confluent wire format: magic byte 0x7b, expected 0x00 (topic notifications, " + json.length + " bytes)");
        assertThat(header(notAvro.headers(), DeadLetterHeaders.ERROR_CLASS)).isEqualTo("org.apache.kafka.common.errors.SerializationException");
        assertThat(header(notAvro.headers(), DeadLetterHeaders.SOURCE_TOPIC)).isEqualTo("notifications");
        assertThat(header(notAvro.headers(), DeadLetterHeaders.SOURCE_PARTITION)).isEqualTo("0");
        assertThat(header(notAvro.headers(), DeadLetterHeaders.SOURCE_OFFSET)).isEqualTo("0");
        assertThat(header(notAvro.headers(), "trace-id")).as("original headers kept").isEqualTo("t-1");

        TestRecord<byte[], byte[]> missingChat = dead.get(1);
        assertThat(missingChat.key()).isEqualTo(utf8("key-2"));
        assertThat(missingChat.value()).isEqualTo(noChat);
        assertThat(header(missingChat.headers(), DeadLetterHeaders.REASON)).isEqualTo("field chat_id is missing (null)");
        assertThat(header(missingChat.headers(), DeadLetterHeaders.ERROR_CLASS)).isEqualTo(InvalidNotificationException.class.getName());
        assertThat(header(missingChat.headers(), DeadLetterHeaders.SOURCE_OFFSET)).isEqualTo("1");

        List<TestRecord<String, OutboundMessage>> out = outboxLive.readRecordsToList();
        assertThat(out).hasSize(1);
        assertThat(out.get(0).key()).isEqualTo("42");
        assertThat(out.get(0).value().getId()).isEqualTo("n-3");
    }

    @Test
    void unknownSchemaIdTooLongTextBlankFieldsAndTombstonesAreDeadLettered() {
        start();
        byte[] unknownId = ByteBuffer.allocate(9).put((byte) 0).putInt(999).putInt(0).array();
        live.pipeInput(utf8("a"), unknownId);
        live.pipeInput(utf8("b"), avro(notification("n-long", "42").setText("x".repeat(5000)).build()));
        live.pipeInput(utf8("c"), avro(notification("n-blank-bot", "42").setBotId(" ").build()));
        live.pipeInput(utf8("d"), avro(notification("n-blank-chat", "").build()));
        live.pipeInput(utf8("e"), (byte[]) null);
        live.pipeInput(utf8("f"), new byte[] {0, 1});
        live.pipeInput(utf8("g"), avro(notification("n-ok", "-1001").setText("x".repeat(4096)).build()));

        List<String> reasons = dlq.readRecordsToList().stream()
                .map(r -> header(r.headers(), DeadLetterHeaders.REASON)).toList();
        assertThat(reasons).hasSize(6);
        assertThat(reasons.get(0)).startsWith("unknown schema id 999 (topic notifications, 9 bytes)");
        assertThat(reasons.get(1)).isEqualTo("field text has 5000 characters, more than the 4096 allowed by Telegram sendMessage (notification id n-long)");
        assertThat(reasons.get(2)).isEqualTo("field bot_id is blank: ' '");
        assertThat(reasons.get(3)).isEqualTo("field chat_id is blank: ''");
        assertThat(reasons.get(4)).contains("null").contains("tombstone");
        assertThat(reasons.get(5)).startsWith("truncated record: 2 bytes");

        List<TestRecord<String, OutboundMessage>> out = outboxLive.readRecordsToList();
        assertThat(out).extracting(TestRecord::key).containsExactly("-1001");
        assertThat(out.get(0).value().getText()).hasSize(4096);
    }

    @Test
    void mapsToAnOutboundMessageDueAtTheProcessingWallClock() {
        start();
        driver.advanceWallClockTime(Duration.ofMinutes(7));
        Instant expires = START.plusSeconds(3600);
        live.pipeInput(utf8("producer-key"), avro(notification("n-1", "42")
                .setEventClass(NotificationClass.CRITICAL).setExpiresAt(expires).setParseMode("HTML")
                .setAttributes(Map.of("magnitude", "8.8")).setBotPool(List.of("alerts-2")).build()));
        live.pipeInput(utf8("producer-key"), avro(notification("n-2", "42").build()));

        List<TestRecord<String, OutboundMessage>> out = outboxLive.readRecordsToList();
        assertThat(out).hasSize(2);
        OutboundMessage m = out.get(0).value();
        assertThat(out.get(0).key()).isEqualTo("42");
        assertThat(m.getId()).isEqualTo("n-1");
        assertThat(m.getBotId()).isEqualTo("alerts");
        assertThat(m.getChatId()).isEqualTo("42");
        assertThat(m.getKind()).isEqualTo("quake.alert");
        assertThat(m.getEventClass()).isEqualTo(NotificationClass.CRITICAL);
        assertThat(m.getLane()).isEqualTo(Lane.LIVE);
        assertThat(m.getParseMode()).isEqualTo("HTML");
        assertThat(m.getCreatedAt()).isEqualTo(START.minusSeconds(5));
        assertThat(m.getDueAt()).isEqualTo(START.plus(Duration.ofMinutes(7)));
        assertThat(m.getExpiresAt()).isEqualTo(expires);
        assertThat(m.getDigestCount()).isZero();
        assertThat(m.getFoldedIds()).isEmpty();
        assertThat(m.getAttributes()).containsEntry("magnitude", "8.8");
        assertThat(m.getBotPool()).containsExactly("alerts-2");
        assertThat(out.get(1).value().getEventClass()).as("no class given: ROUTINE").isEqualTo(NotificationClass.ROUTINE);
    }

    @Test
    void backfillGoesToTheBackfillOutboxWithLaneBackfill() {
        start();
        backfill.pipeInput(utf8("x"), avro(notification("b-1", "77").build()));
        backfill.pipeInput(utf8("y"), utf8("garbage"));

        List<TestRecord<String, OutboundMessage>> out = outboxBackfill.readRecordsToList();
        assertThat(out).hasSize(1);
        assertThat(out.get(0).key()).isEqualTo("77");
        assertThat(out.get(0).value().getLane()).isEqualTo(Lane.BACKFILL);
        assertThat(outboxLive.isEmpty()).isTrue();
        TestRecord<byte[], byte[]> dead = dlq.readRecord();
        assertThat(header(dead.headers(), DeadLetterHeaders.SOURCE_TOPIC)).isEqualTo("notifications.backfill");
        assertThat(dead.value()).isEqualTo(utf8("garbage"));
    }

    @Test
    void keepsPerChatOrderWhenTheProducerDidNotKeyByChat() {
        start();
        Map<String, List<String>> sentByChat = new LinkedHashMap<>();
        for (int i = 0; i < 60; i++) {
            String chat = List.of("101", "-100202", "@quakes").get(i % 3);
            String id = "n-" + i;
            sentByChat.computeIfAbsent(chat, c -> new ArrayList<>()).add(id);
            live.pipeInput(utf8("random-" + (i * 7919 % 13)), avro(notification(id, chat).build()));
        }
        List<TestRecord<String, OutboundMessage>> out = outboxLive.readRecordsToList();
        assertThat(out).hasSize(60);
        Map<String, List<String>> receivedByChat = out.stream().collect(Collectors.groupingBy(
                TestRecord::key, LinkedHashMap::new, Collectors.mapping(r -> r.value().getId(), Collectors.toList())));
        assertThat(receivedByChat).isEqualTo(sentByChat);
        out.forEach(r -> assertThat(r.key()).isEqualTo(r.value().getChatId()));
    }

    @Test
    void aRegistryOutageStopsTheRecordInsteadOfDeadLetteringIt() {
        SchemaRegistryClient down = new SchemaRegistryClient() {
            @Override
            public int register(String subject, Schema schema) {
                return registry.register(subject, schema);
            }

            @Override
            public Schema getById(int id) {
                throw SchemaRegistryException.noResponse("connection refused", null);
            }
        };
        start(down);
        byte[] valid = avro(notification("n-1", "42").build());
        assertThatThrownBy(() -> live.pipeInput(utf8("k"), valid))
                .hasRootCauseInstanceOf(SchemaRegistryException.class);
        assertThat(dlq.isEmpty()).isTrue();
        assertThat(outboxLive.isEmpty()).isTrue();
    }
}
