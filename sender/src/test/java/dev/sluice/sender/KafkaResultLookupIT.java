package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.schemas.InMemorySchemaRegistryClient;
import dev.sluice.schemas.SchemaRegistryClient;
import dev.sluice.testkit.EmbeddedKafka;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link KafkaResultLookup} on a real broker, with results in the sender's own wire format (its Avro serializer, keyed
 * by chat id): the burst of lookups after a crash. Each redelivered message whose mark says "granted" asks from about
 * the same time; before, every lookup read its partition again from that time to the end (100 lookups over 3,000
 * results on 3 partitions read ~100,000 records while every sending thread queued on the lookup's lock). Now one scan
 * per partition serves the burst and later lookups read only what was written since.
 */
class KafkaResultLookupIT {
    private static final String TOPIC = "delivery.results";
    private static final String LATE_TOPIC = "delivery.results.late";
    private static final int RESULTS = 3_000;
    private static EmbeddedKafka kafka;
    private static SchemaRegistryClient registry;
    private static KafkaProducer<String, DeliveryResult> producer;

    @BeforeAll
    static void broker() {
        kafka = EmbeddedKafka.start();
        kafka.createTopics(3, TOPIC, LATE_TOPIC);
        registry = new InMemorySchemaRegistryClient();
        Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        producer = new KafkaProducer<>(p, new StringSerializer(), Serdes.resultSerializer(registry, true));
        for (int i = 0; i < RESULTS; i++) {
            write(TOPIC, "m" + i, "chat" + (i % 300));
        }
        producer.flush();
    }

    @AfterAll
    static void stop() {
        producer.close();
        kafka.close();
    }

    private static void write(String topic, String id, String chat) {
        DeliveryResult r = DeliveryResult.newBuilder().setMessageId(id).setBotId("alerts").setChatId(chat)
                .setStatus(DeliveryStatus.DELIVERED).setResultAt(Instant.now()).build();
        producer.send(new ProducerRecord<>(topic, chat, r));
    }

    private static KafkaResultLookup lookup(String topic) {
        Map<String, Object> c = new HashMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "lookup-it");
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 500);
        return new KafkaResultLookup(topic, c, Serdes.resultDeserializer(registry));
    }

    @Test
    void a_burst_of_lookups_after_a_crash_reads_each_partition_once() {
        long since = System.currentTimeMillis() - 60_000;
        try (KafkaResultLookup lookup = lookup(TOPIC)) {
            for (int i = 0; i < 100; i++) { // granted, never sent: no result anywhere, each read to the end
                assertThat(lookup.hasResult("chat" + (i % 300), "never-sent-" + i, since)).isFalse();
            }
            for (int i = 0; i < RESULTS; i += 60) { // sent, result written before the crash
                assertThat(lookup.hasResult("chat" + (i % 300), "m" + i, since)).as("m" + i).isTrue();
            }
            // the right message under another key is not this message's result
            assertThat(lookup.hasResult("chat1", "m0", since)).isFalse();
            assertThat(lookup.recordsRead()).isLessThanOrEqualTo(RESULTS);
        }
    }

    @Test
    void a_result_written_after_an_earlier_lookup_is_found_by_reading_only_what_is_new() {
        long since = System.currentTimeMillis() - 60_000;
        for (int i = 0; i < 50; i++) {
            write(LATE_TOPIC, "early-" + i, "chat7");
        }
        producer.flush();
        try (KafkaResultLookup lookup = lookup(LATE_TOPIC)) {
            assertThat(lookup.hasResult("chat7", "late-1", since)).isFalse();
            long afterFirst = lookup.recordsRead();
            assertThat(afterFirst).isEqualTo(50);
            write(LATE_TOPIC, "late-1", "chat7");
            producer.flush();
            assertThat(lookup.hasResult("chat7", "late-1", since)).isTrue();
            assertThat(lookup.recordsRead() - afterFirst).isEqualTo(1);
        }
    }
}
