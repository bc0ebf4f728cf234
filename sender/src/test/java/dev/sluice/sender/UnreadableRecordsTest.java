package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.schemas.InMemorySchemaRegistryClient;
import dev.sluice.schemas.SchemaRegistryException;
import dev.sluice.schemas.SpecificAvroSerializer;
import dev.sluice.testkit.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/** The poll-side handler with the clients' mocks: hold and read again, or dead-letter, never skip. */
class UnreadableRecordsTest {
    private final TopicPartition tp = new TopicPartition("outbox.live", 2);
    private final ManualClock clock = new ManualClock();
    private final MockConsumer<String, OutboundMessage> consumer = new MockConsumer<>("earliest");
    private final MockProducer<byte[], byte[]> dlq = new MockProducer<>(true, null, new ByteArraySerializer(),
            new ByteArraySerializer());
    private final Fakes.RecordingSink results = new Fakes.RecordingSink();
    private final OffsetTracker offsets = new OffsetTracker();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final UnreadableRecords unreadable = new UnreadableRecords(consumer, dlq, "outbox.dlq", results, offsets,
            clock, Duration.ofSeconds(60), Duration.ofMillis(100), "test-1", registry);

    UnreadableRecordsTest() {
        consumer.assign(List.of(tp));
        consumer.updateBeginningOffsets(Map.of(tp, 0L));
        consumer.seek(tp, 9);
    }

    private RecordDeserializationException failure(long offset, byte[] value, Throwable cause) {
        return new RecordDeserializationException(RecordDeserializationException.DeserializationExceptionOrigin.VALUE,
                tp, offset, 1_700_000_000_000L, TimestampType.CREATE_TIME, ByteBuffer.wrap("42".getBytes()),
                ByteBuffer.wrap(value), new RecordHeaders(), "Error deserializing VALUE", cause);
    }

    private static byte[] wireFormat() {
        SpecificAvroSerializer<OutboundMessage> serializer = new SpecificAvroSerializer<>(new InMemorySchemaRegistryClient());
        Instant now = Instant.parse("2026-01-01T00:00:00Z");
        return serializer.serialize("outbox.live", OutboundMessage.newBuilder().setId("m-7").setBotId("bot").setChatId("42")
                .setKind("k").setEventClass(dev.sluice.avro.NotificationClass.ROUTINE).setText("hello").setCreatedAt(now)
                .setDueAt(now).build());
    }

    @Test
    void a_registry_outage_holds_the_partition_at_the_record_with_growing_waits_and_never_skips_it() {
        RecordDeserializationException down = failure(12, wireFormat(),
                SchemaRegistryException.noResponse("cannot get schema id 1: ConnectException", null));
        assertThat(unreadable.handle(down)).isFalse();
        assertThat(consumer.position(tp)).as("read again from the record").isEqualTo(12);
        assertThat(unreadable.held(clock.millis())).containsExactly(tp);
        assertThat(unreadable.held(clock.millis() + 100)).as("after the first wait").isEmpty();
        unreadable.handle(down);
        assertThat(unreadable.held(clock.millis() + 100)).as("the second wait is longer").containsExactly(tp);
        assertThat(offsets.committable(tp)).as("never committed past").isEqualTo(12);
        assertThat(dlq.history()).isEmpty();
        assertThat(results.results).isEmpty();
        assertThat(Fakes.count(registry, "sluice.sender.read.retries")).isEqualTo(2);
        unreadable.readPast(tp, 12);
        assertThat(unreadable.held(clock.millis())).isEmpty();
    }

    @Test
    void an_unknown_schema_id_is_read_again_during_the_grace_then_dead_lettered_with_a_failed_result() {
        SerializationException unknown = new SerializationException("unknown schema id 1 (topic outbox.live, 60 bytes)",
                SchemaRegistryException.fromResponse(404, SchemaRegistryException.SCHEMA_NOT_FOUND, "Schema 1 not found"));
        assertThat(unreadable.handle(failure(12, wireFormat(), unknown))).as("a replica may lag").isFalse();
        clock.advance(Duration.ofSeconds(61));
        assertThat(unreadable.handle(failure(12, wireFormat(), unknown))).isTrue();
        assertThat(consumer.position(tp)).isEqualTo(13);
        ProducerRecord<byte[], byte[]> dead = dlq.history().get(0);
        assertThat(dead.topic()).isEqualTo("outbox.dlq");
        assertThat(new String(dead.headers().lastHeader("sluice.dlq.reason").value(), StandardCharsets.UTF_8))
                .startsWith("schema_not_found: unknown schema id 1");
        assertThat(new String(dead.headers().lastHeader("sluice.dlq.source.offset").value(), StandardCharsets.UTF_8))
                .isEqualTo("12");
        assertThat(dead.value()).isEqualTo(wireFormat());
        assertThat(results.results).singleElement().satisfies(r -> {
            assertThat(r.getMessageId()).isEqualTo("m-7");
            assertThat(r.getStatus()).isEqualTo(DeliveryStatus.FAILED);
            assertThat(r.getChatId()).isEqualTo("42");
        });
        assertThat(Fakes.count(registry, "sluice.sender.dead.lettered", "reason", "schema_not_found")).isEqualTo(1);
        assertThat(unreadable.held(clock.millis())).isEmpty();
    }

    @Test
    void bytes_that_are_not_the_wire_format_are_dead_lettered_at_once_and_done_without_a_result() {
        byte[] json = "{\"id\":\"j\"}".getBytes(StandardCharsets.UTF_8);
        SerializationException notWire = new SerializationException("not Confluent wire format: magic byte 0x7b");
        assertThat(unreadable.handle(failure(12, json, notWire))).isTrue();
        assertThat(dlq.history()).singleElement().satisfies(r -> assertThat(r.value()).isEqualTo(json));
        assertThat(results.results).isEmpty();
        assertThat(offsets.committable(tp)).as("done: the commit moves past it").isEqualTo(13);
    }

    @Test
    void refused_credentials_are_the_registry_s_problem_not_the_record_s_and_hold() {
        RecordDeserializationException forbidden = failure(12, wireFormat(),
                SchemaRegistryException.fromResponse(403, 40301, "forbidden"));
        clock.advance(Duration.ofHours(1));
        assertThat(unreadable.handle(forbidden)).isFalse();
        assertThat(dlq.history()).isEmpty();
        assertThat(unreadable.held(clock.millis())).isEqualTo(Set.of(tp));
    }

    @Test
    void a_dead_letter_write_that_fails_holds_the_record_and_tries_again() {
        MockProducer<byte[], byte[]> failing = new MockProducer<>(false, null, new ByteArraySerializer(),
                new ByteArraySerializer());
        UnreadableRecords handler = new UnreadableRecords(consumer, failing, "outbox.dlq", results, offsets, clock,
                Duration.ZERO, Duration.ofMillis(100), "test-1", registry);
        Thread broker = new Thread(() -> { // answers the write with an error as soon as it is sent (bounded wait)
            long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (failing.history().isEmpty() && System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            failing.errorNext(new org.apache.kafka.common.errors.TimeoutException("dlq unavailable"));
        });
        broker.setDaemon(true);
        broker.start();
        assertThat(handler.handle(failure(12, "x".getBytes(), new SerializationException("not wire format")))).isFalse();
        assertThat(consumer.position(tp)).isEqualTo(12);
        assertThat(handler.held(clock.millis())).containsExactly(tp);
        assertThat(offsets.committable(tp)).isEqualTo(12);
    }
}
