package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.NotificationClass;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.schemas.WireFormat;
import dev.sluice.sender.SenderConfig;
import dev.sluice.sender.SenderService;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramCall;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.testkit.TelegramBehaviour;
import dev.sluice.topology.TopicBootstrap;
import dev.sluice.topology.TopologyConfig;
import dev.sluice.topology.TopologyService;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 20 end to end on the embedded broker with the topology, a sender and FakeTelegram, as far as the sender's path
 * allows without its redesign: a record an old producer wrote with the previous Notification schema is delivered; an edit
 * of a notification that ended without a message and a delete of one that never had a result end FAILED with their
 * defined reasons, without a provider call, and the chat's next message is delivered after them.
 */
class RichMessagesPipelineIT {
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456789");
    private static final String BOT = "123456789";

    @Test
    void oldRecordsAreDeliveredAndUnaddressableEditsEndWithTheirDefinedResults(@TempDir Path dir) throws Exception {
        AvroTrust.ensure();
        Topics topics = Topics.defaults();
        try (EmbeddedKafka kafka = EmbeddedKafka.start(); InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();
             FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.unlimited())) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
                TopicBootstrap.ensureTopics(admin, topics, 3, (short) 1);
            }
            telegram.enqueueForChat(BOT, "7002", TelegramBehaviour.chatNotFound(), 1);
            Settings common = Settings.of(Map.of("bootstrap.servers", kafka.bootstrapServers(), "schema.registry.url", registry.url()));
            String[] connect = {"-D", "bootstrap.servers=" + kafka.bootstrapServers(), "-D", "schema.registry.url=" + registry.url()};
            List<DeliveryResult> results = new CopyOnWriteArrayList<>();
            try (TopologyService topology = new TopologyService(TopologyConfig.from(common.with("application.id", "rich-it")
                         .with("state.dir", dir.resolve("state").toString()).with("commit.interval.ms", "100")
                         .with("edit.wait.max.ms", "3000")));
                 SenderService sender = new SenderService(SenderConfig.from(common.with("sender.instance.id", "sender-1")
                         .with("telegram.api.url", telegram.apiUrl()).with("bot.alerts.token", TOKEN)
                         .with("budget.mode", "local").with("sender.commit.interval.ms", "100")), new SimpleMeterRegistry());
                 KafkaConsumer<String, DeliveryResult> consumer = resultConsumer(kafka, registry, topics)) {
                topology.start();
                sender.start();

                // An old producer: the previous schema, registered under its own id, Confluent wire format.
                Schema previous;
                try (InputStream in = getClass().getResourceAsStream("/previous-schema/Notification.avsc")) {
                    Schema.Parser parser = new Schema.Parser();
                    parser.parse(NotificationClass.getClassSchema().toString());
                    previous = parser.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
                }
                int id = new CachedSchemaRegistryClient(registry.url()).register("notifications-value", previous);
                GenericRecord old = new GenericData.Record(previous);
                old.put("id", "old-1");
                old.put("bot_id", "alerts");
                old.put("chat_id", "7001");
                old.put("kind", "meeting.reminder");
                old.put("text", "written by an old producer");
                old.put("created_at", Instant.now().toEpochMilli());
                old.put("bot_pool", List.of());
                old.put("attributes", Map.of());
                try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        kafka.bootstrapServers()), new StringSerializer(), new ByteArraySerializer())) {
                    producer.send(new ProducerRecord<>(topics.notifications(), "7001", wire(id, previous, old))).get();
                }

                // Through `sluice produce`: an original that fails (chat not found), then its edit; a delete of an id never
                // sent, then a message behind it in the same chat.
                Path file = dir.resolve("rich.jsonl");
                Files.write(file, List.of(
                        "{\"id\":\"gone-1\",\"bot_id\":\"alerts\",\"chat_id\":\"7002\",\"kind\":\"k\",\"event_class\":\"CRITICAL\",\"text\":\"first\"}"));
                assertThat(execute(new ProduceCommand(), "--file", file.toString(), "--progress", "none", connect[0], connect[1],
                        connect[2], connect[3])).isZero();
                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
                    consumer.poll(Duration.ofMillis(200)).forEach(r -> results.add(r.value()));
                    return results.stream().anyMatch(r -> r.getMessageId().equals("gone-1"));
                });
                Files.write(file, List.of(
                        "{\"id\":\"edit-1\",\"bot_id\":\"alerts\",\"chat_id\":\"7002\",\"kind\":\"k\",\"event_class\":\"CRITICAL\","
                                + "\"edit_of\":\"gone-1\",\"text\":\"edited\"}",
                        "{\"id\":\"del-1\",\"bot_id\":\"alerts\",\"chat_id\":\"7003\",\"kind\":\"k\",\"event_class\":\"CRITICAL\","
                                + "\"delete_of\":\"never-sent\"}",
                        "{\"id\":\"after-1\",\"bot_id\":\"alerts\",\"chat_id\":\"7003\",\"kind\":\"k\",\"event_class\":\"CRITICAL\","
                                + "\"text\":\"behind the delete\"}"));
                assertThat(execute(new ProduceCommand(), "--file", file.toString(), "--progress", "none", connect[0], connect[1],
                        connect[2], connect[3])).isZero();

                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
                    consumer.poll(Duration.ofMillis(200)).forEach(r -> results.add(r.value()));
                    return results.size() >= 5;
                });
                consumer.poll(Duration.ofSeconds(1)).forEach(r -> results.add(r.value()));
                Map<String, DeliveryResult> byId = new java.util.HashMap<>();
                results.forEach(r -> assertThat(byId.put(r.getMessageId(), r)).as("one result per id").isNull());
                assertThat(byId.keySet()).containsExactlyInAnyOrder("old-1", "gone-1", "edit-1", "del-1", "after-1");
                assertThat(byId.get("old-1").getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
                assertThat(telegram.acceptedFor("7001")).extracting(FakeTelegramAccepted::text).containsExactly("written by an old producer");
                assertThat(byId.get("gone-1").getStatus()).isEqualTo(DeliveryStatus.FAILED);
                assertThat(byId.get("edit-1").getStatus()).isEqualTo(DeliveryStatus.FAILED);
                assertThat(byId.get("edit-1").getReason())
                        .isEqualTo("message to edit not found: notification gone-1 ended FAILED without a message in chat 7002");
                assertThat(byId.get("del-1").getStatus()).isEqualTo(DeliveryStatus.FAILED);
                assertThat(byId.get("del-1").getReason()).startsWith("message to delete not found: no result of notification never-sent");
                assertThat(telegram.callsFor("7002")).as("the edit made no call").hasSize(1);
                assertThat(byId.get("after-1").getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
                assertThat(byId.get("after-1").getSentAt()).as("released behind the delete").isAfter(byId.get("del-1").getResultAt());
                assertThat(telegram.callsFor("7003")).extracting(FakeTelegramCall::text).containsExactly("behind the delete");
            }
        }
    }

    private static byte[] wire(int id, Schema schema, GenericRecord record) throws java.io.IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        bytes.write(WireFormat.MAGIC_BYTE);
        bytes.write(ByteBuffer.allocate(4).putInt(id).array());
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(bytes, null);
        new GenericDatumWriter<GenericRecord>(schema).write(record, encoder);
        encoder.flush();
        return bytes.toByteArray();
    }

    private static int execute(Object command, String... args) {
        return new picocli.CommandLine(command).setCaseInsensitiveEnumValuesAllowed(true).execute(args);
    }

    private static KafkaConsumer<String, DeliveryResult> resultConsumer(EmbeddedKafka kafka, InProcessSchemaRegistry registry, Topics topics) {
        KafkaConsumer<String, DeliveryResult> c = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "rich-it-results", ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"), new StringDeserializer(),
                new SpecificAvroSerde<>(new CachedSchemaRegistryClient(registry.url()), DeliveryResult.class).deserializer());
        c.subscribe(List.of(topics.deliveryResults()));
        return c;
    }
}
