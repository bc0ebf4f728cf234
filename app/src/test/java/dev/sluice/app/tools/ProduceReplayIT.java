package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Lane;
import dev.sluice.avro.Notification;
import dev.sluice.config.Topics;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.topology.DeadLetterHeaders;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code sluice produce} and {@code sluice replay} against the embedded KRaft broker and the in-process
 * schema registry: produce validates each line and writes the good ones keyed by chat id; replay moves
 * exactly the FAILED results of a run back through notifications.backfill as their original notifications,
 * and republishes dead letters byte for byte.
 */
class ProduceReplayIT {
    private static final Topics TOPICS = Topics.defaults();
    private static EmbeddedKafka kafka;
    private static InProcessSchemaRegistry registry;
    private static CachedSchemaRegistryClient client;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() {
        AvroTrust.ensure();
        kafka = EmbeddedKafka.start();
        kafka.createTopics(3, TOPICS.notifications(), TOPICS.notificationsBackfill(), TOPICS.deliveryResults(), TOPICS.dlq(),
                "produce.bad", "dlq.replayed");
        registry = InProcessSchemaRegistry.start();
        client = new CachedSchemaRegistryClient(registry.url());
    }

    @AfterAll
    static void stop() {
        registry.close();
        kafka.close();
    }

    /** Runs a subcommand like the CLI does, capturing stdout and stderr. */
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

    @Test
    void produceWritesValidLinesKeyedByChatAndNamesLineFieldAndValueOfBadOnes() throws Exception {
        Path file = dir.resolve("events.jsonl");
        Files.writeString(file, String.join("\n",
                "{\"id\":\"p-1\",\"bot_id\":\"alerts\",\"chat_id\":\"1001\",\"kind\":\"quake\",\"text\":\"M5.1 near Petropavlovsk\",\"event_class\":\"CRITICAL\",\"created_at\":\"2025-07-30T00:00:00Z\",\"expires_at\":1753837200000,\"attributes\":{\"magnitude\":5.1}}",
                "{\"id\":\"p-2\",\"bot_id\":\"alerts\",\"chat_id\":-2002,\"kind\":\"quake\",\"text\":\"aftershock\",\"bot_pool\":[\"alerts\",\"alerts-2\"]}",
                "",
                "{\"id\":\"p-3\",\"bot_id\":\"alerts\",\"chat_id\":\"1001\",\"kind\":\"quake\",\"text\":\"x\",\"expires_at\":\"tomorrow\"}",
                "{\"id\":\"p-4\",\"bot_id\":\"alerts\",\"chatId\":\"1001\",\"kind\":\"quake\",\"text\":\"x\"}",
                "{\"id\":\"p-5\",\"bot_id\":\"alerts\",\"kind\":\"quake\",\"text\":\"x\"}",
                "{\"id\":\"p-6\",\"bot_id\":\"alerts\",\"chat_id\":\"1001\",\"kind\":\"quake\",\"text\":\"x\",\"event_class\":\"URGENT\"}",
                "not json",
                "{\"id\":\"p-8\",\"bot_id\":\"alerts\",\"chat_id\":\"1003\",\"kind\":\"quake\",\"text\":\"" + "y".repeat(4097) + "\"}",
                "{\"id\":\"p-9\",\"bot_id\":\"alerts\",\"chat_id\":\"1001\",\"kind\":\"quake\",\"text\":\"second for 1001\"}"));

        Run r = run(new ProduceCommand(), "--file", file.toString(), "--progress", "plain");

        assertThat(r.exit()).as(r.err()).isEqualTo(1); // some lines skipped
        assertThat(r.err()).contains("line 4, field 'expires_at': 'tomorrow' is not an ISO-8601 instant")
                .contains("line 5, field 'chatId': unknown field")
                .contains("line 6, field 'chat_id': missing")
                .contains("line 7, field 'event_class': 'URGENT' is not one of [CRITICAL, ROUTINE, COLLAPSIBLE]")
                .contains("line 8, field '(line)': not JSON")
                .contains("line 9, field 'text': field text has 4097 characters")
                .contains("produce: 10/10 records"); // the plain progress line (no terminal here)
        assertThat(r.out()).contains("3 notifications written to notifications, 6 bad lines skipped (of 9)");

        List<ConsumerRecord<String, Notification>> written = read(TOPICS.notifications(), Notification.class, 3);
        assertThat(written).extracting(ConsumerRecord::key).containsExactlyInAnyOrder("1001", "-2002", "1001");
        Map<String, Notification> byId = written.stream().collect(Collectors.toMap(c -> c.value().getId(), ConsumerRecord::value));
        Notification first = byId.get("p-1");
        assertThat(first.getCreatedAt()).isEqualTo(Instant.parse("2025-07-30T00:00:00Z"));
        assertThat(first.getExpiresAt()).isEqualTo(Instant.ofEpochMilli(1753837200000L));
        assertThat(first.getEventClass()).hasToString("CRITICAL");
        assertThat(first.getAttributes()).containsEntry("magnitude", "5.1");
        assertThat(byId.get("p-2").getBotPool()).containsExactly("alerts", "alerts-2");
        // per-chat order: same key, same partition, file order
        assertThat(written.stream().filter(c -> c.key().equals("1001")).map(c -> c.value().getId())).containsExactly("p-1", "p-9");

        Run failFast = run(new ProduceCommand(), "--file", file.toString(), "--topic", "produce.bad", "--fail-fast", "--progress", "none");
        assertThat(failFast.exit()).isEqualTo(1);
        assertThat(failFast.err()).contains("line 4, field 'expires_at'").contains("nothing was written to produce.bad");
        assertThat(endOffsets("produce.bad")).isZero();
    }

    @Test
    void replayMovesExactlyTheFailedResultsOfARunBackThroughBackfill() throws Exception {
        // A run: 20 notifications to 4 chats; 5 single messages FAILED, one digest FAILED (2 folded ids), the rest DELIVERED.
        Path file = dir.resolve("run.jsonl");
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            lines.add("{\"id\":\"r-" + i + "\",\"bot_id\":\"alerts\",\"chat_id\":\"" + (500 + i % 4) + "\",\"kind\":\"task.assigned\",\"text\":\"task #" + i + "\"}");
        }
        Files.write(file, lines);
        Instant runStart = Instant.now();
        assertThat(run(new ProduceCommand(), "--file", file.toString(), "--progress", "none").exit()).isZero();

        List<String> failedSingles = List.of("r-1", "r-5", "r-6", "r-13", "r-17");
        List<String> failedDigest = List.of("r-2", "r-10");
        try (KafkaProducer<String, DeliveryResult> producer = producer(DeliveryResult.class)) {
            for (int i = 0; i < 20; i++) {
                String id = "r-" + i;
                if (failedDigest.contains(id)) {
                    continue;
                }
                DeliveryStatus status = failedSingles.contains(id) ? DeliveryStatus.FAILED : DeliveryStatus.DELIVERED;
                producer.send(new ProducerRecord<>(TOPICS.deliveryResults(), chatOf(i), result(id, chatOf(i), status, List.of())));
            }
            producer.send(new ProducerRecord<>(TOPICS.deliveryResults(), "502",
                    result("digest-502-1", "502", DeliveryStatus.FAILED, failedDigest)));
            // A result of another, older notification that is no longer anywhere: EXPIRED, not selected by status=FAILED.
            producer.send(new ProducerRecord<>(TOPICS.deliveryResults(), "999", result("gone-1", "999", DeliveryStatus.EXPIRED, List.of())));
            producer.flush();
        }

        Run r = run(new ReplayCommand(), "--from", TOPICS.deliveryResults(), "--to", TOPICS.notificationsBackfill(),
                "--since", runStart.minusSeconds(60).toString(), "--filter", "status=FAILED", "--progress", "plain");

        assertThat(r.exit()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("6 results matched (status=FAILED, since").contains("7 notifications found")
                .contains("7 written to notifications.backfill");
        assertThat(r.err()).contains("replay: reading delivery.results: 20/20 records")
                .contains("replay: writing notifications.backfill: 7/7 records (100%)");
        List<ConsumerRecord<String, Notification>> replayed = read(TOPICS.notificationsBackfill(), Notification.class, 7);
        assertThat(replayed).extracting(c -> c.value().getId())
                .containsExactlyInAnyOrder("r-1", "r-5", "r-6", "r-13", "r-17", "r-2", "r-10");
        for (ConsumerRecord<String, Notification> c : replayed) {
            int i = Integer.parseInt(c.value().getId().substring(2));
            assertThat(c.key()).isEqualTo(chatOf(i)).isEqualTo(c.value().getChatId());
            assertThat(c.value().getText()).isEqualTo("task #" + i);
            assertThat(c.value().getAttributes()).containsEntry(ReplayCommand.REPLAYED_FROM_ATTRIBUTE, "delivery.results:FAILED");
        }
        // per chat, the original order: chat 501 had r-1, r-5, r-13, r-17 (r-9 delivered)
        assertThat(replayed.stream().filter(c -> c.key().equals("501")).map(c -> c.value().getId()))
                .containsExactly("r-1", "r-5", "r-13", "r-17");

        // A result whose notification is gone is reported by id (exit 1); --dry-run writes nothing.
        Run missing = run(new ReplayCommand(), "--from", TOPICS.deliveryResults(), "--filter", "status=EXPIRED",
                "--dry-run", "--progress", "none");
        assertThat(missing.exit()).isEqualTo(1);
        assertThat(missing.out()).contains("1 notifications not found (past retention?): gone-1");
        assertThat(endOffsets(TOPICS.notificationsBackfill())).isEqualTo(7);

        Run badFilter = run(new ReplayCommand(), "--from", TOPICS.deliveryResults(), "--filter", "state=FAILED");
        assertThat(badFilter.exit()).isEqualTo(2);
        assertThat(badFilter.err()).contains("--filter state=FAILED: no such field in DeliveryResult");
    }

    @Test
    void replayRepublishesDeadLettersByteForByteWithoutTheDlqHeaders() throws Exception {
        byte[][] values = {{0, 1, 2}, "not avro".getBytes(StandardCharsets.UTF_8), {9, 9}};
        String[] errors = {"org.apache.kafka.common.errors.SerializationException", "dev.sluice.topology.InvalidNotificationException",
                "org.apache.kafka.common.errors.SerializationException"};
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(), new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < values.length; i++) {
                RecordHeaders h = new RecordHeaders();
                h.add("trace-id", ("t" + i).getBytes(StandardCharsets.UTF_8));
                h.add(DeadLetterHeaders.REASON, ("reason " + i).getBytes(StandardCharsets.UTF_8));
                h.add(DeadLetterHeaders.ERROR_CLASS, errors[i].getBytes(StandardCharsets.UTF_8));
                producer.send(new ProducerRecord<>(TOPICS.dlq(), null, ("k" + i).getBytes(StandardCharsets.UTF_8), values[i], h));
            }
            producer.flush();
        }

        Run r = run(new ReplayCommand(), "--from", TOPICS.dlq(), "--to", "dlq.replayed",
                "--filter", "error.class=org.apache.kafka.common.errors.SerializationException", "--progress", "plain");

        assertThat(r.exit()).as(r.out() + r.err()).isZero();
        assertThat(r.out()).contains("2 dead letters matched").contains("2 written to dlq.replayed");
        List<ConsumerRecord<byte[], byte[]>> out = readRaw("dlq.replayed", 2);
        Map<String, byte[]> byKey = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> c : out) {
            byKey.put(new String(c.key(), StandardCharsets.UTF_8), c.value());
            assertThat(c.headers().lastHeader("trace-id")).isNotNull();
            assertThat(c.headers().toArray()).noneMatch(h -> h.key().startsWith(DeadLetterHeaders.PREFIX));
            assertThat(new String(c.headers().lastHeader(ReplayCommand.REPLAY_SOURCE_HEADER).value(), StandardCharsets.UTF_8))
                    .startsWith(TOPICS.dlq() + ":");
        }
        assertThat(byKey).containsOnlyKeys("k0", "k2");
        assertThat(byKey.get("k0")).containsExactly(0, 1, 2);
        assertThat(byKey.get("k2")).containsExactly(9, 9);
    }

    private static String chatOf(int i) {
        return Integer.toString(500 + i % 4);
    }

    private static DeliveryResult result(String id, String chat, DeliveryStatus status, List<String> folded) {
        return DeliveryResult.newBuilder().setMessageId(id).setBotId("alerts").setChatId(chat).setStatus(status)
                .setLane(Lane.LIVE).setResultAt(Instant.now()).setFoldedIds(folded).setDigestCount(folded.size())
                .setReason(status == DeliveryStatus.DELIVERED ? null : "Bad Request: chat not found").build();
    }

    private static Map<String, Object> producerProps() {
        return Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(), ProducerConfig.ACKS_CONFIG, "all");
    }

    private static <T extends org.apache.avro.specific.SpecificRecord> KafkaProducer<String, T> producer(Class<T> type) {
        return new KafkaProducer<>(producerProps(), new StringSerializer(), new SpecificAvroSerde<>(client, type).serializer());
    }

    private static <T extends org.apache.avro.specific.SpecificRecord> List<ConsumerRecord<String, T>> read(String topic, Class<T> type, int expected) {
        var values = new SpecificAvroSerde<>(client, type).deserializer();
        List<ConsumerRecord<String, T>> out = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> c : readRaw(topic, expected)) {
            out.add(new ConsumerRecord<>(c.topic(), c.partition(), c.offset(), new String(c.key(), StandardCharsets.UTF_8),
                    values.deserialize(topic, c.value())));
        }
        return out;
    }

    /** Everything in {@code topic} (bounded wait for {@code expected}), then a short extra poll to catch surplus. */
    private static List<ConsumerRecord<byte[], byte[]>> readRaw(String topic, int expected) {
        Map<String, Object> p = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "it-read-" + topic + "-" + System.nanoTime(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (out.size() < expected && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
            consumer.poll(Duration.ofMillis(300)).forEach(out::add);
        }
        assertThat(out).as("records in " + topic).hasSize(expected);
        return out;
    }

    private static long endOffsets(String topic) {
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                kafka.bootstrapServers()), new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            var parts = consumer.partitionsFor(topic).stream()
                    .map(i -> new org.apache.kafka.common.TopicPartition(topic, i.partition())).toList();
            return consumer.endOffsets(parts).values().stream().mapToLong(Long::longValue).sum();
        }
    }
}
