package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.InProcessSchemaRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * Issue 15 / finding F1, permanent side: two outbox records the sender can never read sit before a valid one in
 * the same partition. One was written by a producer pointed at another schema registry (its schema id does not
 * exist in the sender's registry, still after {@code sender.unreadable.schema.grace.ms}); one is JSON written
 * straight to the topic (not the wire format). Both go to the sender's dead-letter topic with the reason in
 * headers; the first, whose bytes still decode with the sender's schema, also gets a FAILED result; the valid
 * message behind them is delivered and the group's lag returns to 0.
 */
class UnreadableOutboxRecordIT {
    private static final String BOT = "unreadable";
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("760000001");

    @Test
    void records_that_can_never_be_read_are_dead_lettered_with_a_reason_and_a_failed_result_and_the_rest_flows()
            throws Exception {
        String prefix = "deadletter";
        SenderIt.topics(prefix, 1);
        String outbox = prefix + ".outbox.live";
        try (InProcessSchemaRegistry other = InProcessSchemaRegistry.start();
             InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();
             FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram().withGlobalPerSecond(200))) {
            // another registry gave out more ids, so OutboundMessage has an id the sender's registry never had
            CachedSchemaRegistryClient otherClient = new CachedSchemaRegistryClient(other.url());
            for (int i = 0; i < 5; i++) {
                Schema s = SchemaBuilder.record("Other" + i).namespace("dev.example").fields().requiredString("f").endRecord();
                otherClient.register("other-" + i, s);
            }
            SenderIt.produce(outbox, List.of(SenderIt.message("lost-id", BOT, "90001").build()), other.url());
            Map<String, Object> pp = new HashMap<>();
            pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, SenderIt.kafka().bootstrapServers());
            try (KafkaProducer<String, String> json = new KafkaProducer<>(pp, new StringSerializer(), new StringSerializer())) {
                json.send(new ProducerRecord<>(outbox, "90002", "{\"id\":\"json-1\",\"bot_id\":\"" + BOT
                        + "\",\"chat_id\":\"90002\",\"text\":\"hi\"}")).get();
            }
            SenderIt.produce(outbox, List.of(SenderIt.message("fine", BOT, "90003").build()), registry.url());

            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(), Map.of(BOT, TOKEN));
            s.put("schema.registry.url", registry.url());
            s.put("sender.unreadable.schema.grace.ms", "2000");
            try (SenderService sender = SenderIt.sender(s);
                 SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results", registry.url())) {
                sender.start();
                Map<String, DeliveryResult> byId = results.awaitResults(2, Duration.ofSeconds(30));
                assertThat(byId.get("fine").getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
                DeliveryResult lost = byId.get("lost-id");
                assertThat(lost.getStatus()).isEqualTo(DeliveryStatus.FAILED);
                assertThat(lost.getReason()).contains("schema_not_found").contains(prefix + ".outbox.dlq");
                assertThat(lost.getChatId()).isEqualTo("90001");
                assertThat(results.all).as("no result for the JSON record (no id readable), one each else").hasSize(2);
                assertThat(telegram.accepted()).singleElement().satisfies(a -> assertThat(a.chatId()).isEqualTo("90003"));
                assertThat(Meters.sum(sender, "sluice.sender.dead.lettered")).isEqualTo(2);
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
                        .until(() -> Lag.of(SenderIt.kafka(), prefix + "-group", outbox) == 0);
            }
            List<ConsumerRecord<byte[], byte[]>> dead = readAll(prefix + ".outbox.dlq", 2);
            assertThat(dead).hasSize(2);
            assertThat(reason(dead.get(0))).startsWith("schema_not_found").contains("unknown schema id");
            assertThat(header(dead.get(0), "sluice.dlq.source.topic")).isEqualTo(outbox);
            assertThat(header(dead.get(0), "sluice.dlq.source.offset")).isEqualTo("0");
            assertThat(reason(dead.get(1))).startsWith("not_wire_format").contains("magic byte 0x7b");
            assertThat(new String(dead.get(1).value(), StandardCharsets.UTF_8)).contains("json-1");
            assertThat(header(dead.get(1), "sluice.dlq.source.offset")).isEqualTo("1");
        }
    }

    private static String reason(ConsumerRecord<byte[], byte[]> r) {
        return header(r, "sluice.dlq.reason");
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        return new String(r.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
    }

    private static List<ConsumerRecord<byte[], byte[]>> readAll(String topic, int expected) {
        Map<String, Object> cp = new HashMap<>();
        cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, SenderIt.kafka().bootstrapServers());
        cp.put(ConsumerConfig.GROUP_ID_CONFIG, topic + "-reader-" + System.nanoTime());
        cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(cp, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            c.subscribe(List.of(topic));
            await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(10)).until(() -> {
                c.poll(Duration.ofMillis(200)).forEach(out::add);
                return out.size() >= expected;
            });
            c.poll(Duration.ofMillis(300)).forEach(out::add);
        }
        return out;
    }
}
