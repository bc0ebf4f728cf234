package dev.sluice.topology;

import dev.sluice.avro.ChatEvent;
import dev.sluice.avro.ChatEventType;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.Notification;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.avro.Preference;
import dev.sluice.avro.SenderStatus;
import dev.sluice.config.Settings;
import dev.sluice.schemas.InMemorySchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroDeserializer;
import dev.sluice.schemas.SpecificAvroSerializer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.test.TestRecord;

/** A TopologyTestDriver around the Sluice topology with typed input and output topics and a mock wall clock. */
final class Harness implements AutoCloseable {
    final InMemorySchemaRegistryClient registry = new InMemorySchemaRegistryClient();
    final TopologyCounts counts = new TopologyCounts();
    final TopologyTestDriver driver;
    final TestInputTopic<byte[], byte[]> live;
    final TestInputTopic<byte[], byte[]> backfill;
    final TestInputTopic<String, ChatEvent> chatEvents;
    final TestInputTopic<String, DeliveryResult> results;
    final TestInputTopic<String, DeliveryResult> parts;
    final TestInputTopic<String, SenderStatus> senderStatus;
    final TestInputTopic<String, Preference> preferences;
    final TestOutputTopic<String, OutboundMessage> outboxLive;
    final TestOutputTopic<String, OutboundMessage> outboxBackfill;
    final TestOutputTopic<String, DeliveryResult> resultsOut;
    final TestOutputTopic<byte[], byte[]> dlq;
    private final SpecificAvroSerializer<Notification> notifications = new SpecificAvroSerializer<>(registry);
    private Instant now;

    Harness(Path stateDir, Instant start, Map<String, String> extra) {
        Map<String, String> settings = new HashMap<>(Map.of(
                "bootstrap.servers", "unused:9092", "schema.registry.url", "http://unused:8081",
                "state.dir", stateDir.toString()));
        settings.putAll(extra);
        TopologyConfig config = TopologyConfig.from(Settings.of(settings));
        // The test driver reads every topic as one partition (0): records keyed by their chat id skip the repartition.
        ChatKeyedInput keyedInput = ChatKeyedInput.unknown();
        keyedInput.partitions(Map.of("notifications", 1, "notifications.backfill", 1));
        driver = new TopologyTestDriver(SluiceTopology.build(config, registry, counts, keyedInput), config.streamsProperties(), start);
        now = start;
        live = driver.createInputTopic("notifications", new ByteArraySerializer(), new ByteArraySerializer());
        backfill = driver.createInputTopic("notifications.backfill", new ByteArraySerializer(), new ByteArraySerializer());
        chatEvents = driver.createInputTopic("chat.events", new StringSerializer(), new SpecificAvroSerializer<>(registry));
        results = driver.createInputTopic("delivery.results", new StringSerializer(), new SpecificAvroSerializer<>(registry));
        parts = driver.createInputTopic("delivery.parts", new StringSerializer(), new SpecificAvroSerializer<>(registry));
        senderStatus = driver.createInputTopic("sender.status", new StringSerializer(), new SpecificAvroSerializer<>(registry));
        preferences = driver.createInputTopic("preferences", new StringSerializer(), new SpecificAvroSerializer<>(registry));
        outboxLive = driver.createOutputTopic("outbox.live", new StringDeserializer(),
                new SpecificAvroDeserializer<>(registry, OutboundMessage.class));
        outboxBackfill = driver.createOutputTopic("outbox.backfill", new StringDeserializer(),
                new SpecificAvroDeserializer<>(registry, OutboundMessage.class));
        resultsOut = driver.createOutputTopic("delivery.results", new StringDeserializer(),
                new SpecificAvroDeserializer<>(registry, DeliveryResult.class));
        dlq = driver.createOutputTopic("notifications.dlq", new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    Instant now() {
        return now;
    }

    /** Advances the mock wall clock (fires wall-clock punctuators) in steps of at most {@code step}. */
    void advance(Duration by, Duration step) {
        Duration left = by;
        while (!left.isZero() && !left.isNegative()) {
            Duration d = left.compareTo(step) < 0 ? left : step;
            driver.advanceWallClockTime(d);
            now = now.plus(d);
            left = left.minus(d);
        }
    }

    void advance(Duration by) {
        advance(by, by);
    }

    /** Advances the wall clock to {@code t} (no-op if it is in the past). */
    void advanceTo(Instant t, Duration step) {
        if (t.isAfter(now)) {
            advance(Duration.between(now, t), step);
        }
    }

    byte[] avro(Notification n) {
        return notifications.serialize("notifications", n);
    }

    /** Pipes a notification to {@code notifications}, keyed by something other than the chat (the topology re-keys). */
    void send(Notification n) {
        live.pipeInput(new TestRecord<>(utf8("producer-" + n.getId()), avro(n), now));
    }

    /** Pipes a notification to {@code notifications} keyed by its chat id as produced ({@code key}): the direct path when normalised. */
    void sendKeyed(Notification n, String key) {
        live.pipeInput(new TestRecord<>(utf8(key), avro(n), now));
    }

    void sendBackfill(Notification n) {
        backfill.pipeInput(new TestRecord<>(utf8("producer-" + n.getId()), avro(n), now));
    }

    void chatEvent(String chat, ChatEventType type, String newChat) {
        chatEvent("alerts", chat, type, newChat);
    }

    /** A chat.events record as {@code sluice chat-event} writes it: keyed by the chat id, for {@code bot} ({@code *}: every bot). */
    void chatEvent(String bot, String chat, ChatEventType type, String newChat) {
        chatEvents.pipeInput(new TestRecord<>(chat, ChatEvent.newBuilder().setBotId(bot).setChatId(chat).setType(type)
                .setNewChatId(newChat).setAt(now).build(), now));
    }

    /** A delivery.results record, keyed by its chat_id as the sender's KafkaResultSink keys it. */
    void result(DeliveryResult r) {
        results.pipeInput(new TestRecord<>(r.getChatId(), r, now));
    }

    /** A delivery.parts record (the result of one part of a split notification), keyed by its chat_id as the sender keys it. */
    void partResult(DeliveryResult r) {
        parts.pipeInput(new TestRecord<>(r.getChatId(), r, now));
    }

    /** A sender.status report of one instance. */
    void senderStatus(String bot, String instance, long backlog, double drainRatePerS) {
        senderStatus.pipeInput(new TestRecord<>(bot + "/" + instance, SenderStatus.newBuilder().setBotId(bot).setInstanceId(instance)
                .setBacklog(backlog).setDrainRatePerS(drainRatePerS).setAt(now).build(), now));
    }

    void optOut(String user, boolean optOut) {
        preferences.pipeInput(new TestRecord<>(user, Preference.newBuilder().setUserId(user).setDigestOptOut(optOut).setAt(now).build(), now));
    }

    List<OutboundMessage> drainLive() {
        return outboxLive.readValuesToList();
    }

    static Notification.Builder notification(String id, String chat, Instant createdAt) {
        return Notification.newBuilder().setId(id).setBotId("alerts").setChatId(chat).setKind("task.updated")
                .setEntity("task-42").setText("Task 42: state " + id).setCreatedAt(createdAt);
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        driver.close();
    }
}
