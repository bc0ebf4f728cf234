package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.sender.idempotency.InMemorySentMarks;
import dev.sluice.sender.idempotency.SentMarks;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

class KafkaResultSinkTest {
    private final TopicPartition tp = new TopicPartition("outbox.live", 0);
    private final OffsetTracker offsets = new OffsetTracker();
    private final InMemorySentMarks marks = new InMemorySentMarks(Duration.ofDays(1));
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private static final Serializer<DeliveryResult> NO_BYTES = (topic, r) -> new byte[0];

    private DeliveryResult delivered(String id) {
        return DeliveryResult.newBuilder().setMessageId(id).setBotId("bot").setChatId("42")
                .setStatus(DeliveryStatus.DELIVERED).setResultAt(Instant.now()).build();
    }

    private PendingMessage pending(long offset, String id) {
        offsets.received(tp, offset);
        return new PendingMessage(tp, offset, Fakes.message(id, "42", Instant.now(), null));
    }

    @Test
    void a_write_that_fails_later_is_written_again_and_only_then_the_offset_is_done() {
        MockProducer<String, DeliveryResult> producer = new MockProducer<>(false, null, new StringSerializer(), NO_BYTES);
        try (KafkaResultSink sink = new KafkaResultSink(producer, "delivery.results", offsets, marks,
                Duration.ofMillis(10), registry, "test-1")) {
            sink.emit(pending(7, "m7"), delivered("m7"));
            assertThat(sink.awaitingWrite()).isEqualTo(1);
            producer.errorNext(new TimeoutException("Expiring 1 record(s): 3000 ms has passed since batch creation"));
            assertThat(offsets.committable(tp)).as("not done while unwritten").isEqualTo(7);
            await().atMost(Duration.ofSeconds(5)).until(() -> producer.history().size() == 2);
            assertThat(producer.completeNext()).isTrue();
            assertThat(offsets.committable(tp)).as("done once written").isEqualTo(8);
            assertThat(sink.awaitingWrite()).isZero();
            assertThat(marks.get("bot", "m7").state()).isEqualTo(SentMarks.State.RESULT_WRITTEN);
            assertThat(Fakes.count(registry, "sluice.results.write.failed", "cause", "broker")).isEqualTo(1);
        }
    }

    @Test
    void a_write_that_throws_at_once_is_written_again_with_backoff_and_never_throws_to_the_caller() {
        MockProducer<String, DeliveryResult> producer = new MockProducer<>(true, null, new StringSerializer(), NO_BYTES);
        int[] refusals = {2};
        Serializer<DeliveryResult> refusingTwice = (topic, r) -> {
            if (refusals[0]-- > 0) {
                throw new dev.sluice.schemas.SchemaRegistryException(403, 40301, "forbidden", false, null);
            }
            return new byte[0];
        };
        MockProducer<String, DeliveryResult> serializing = new MockProducer<>(true, null, new StringSerializer(), refusingTwice);
        try (KafkaResultSink sink = new KafkaResultSink(serializing, "delivery.results", offsets, marks,
                Duration.ofMillis(10), registry, "test-1")) {
            sink.emit(pending(3, "m3"), delivered("m3"));
            await().atMost(Duration.ofSeconds(5)).until(() -> offsets.committable(tp) == 4);
            assertThat(serializing.history()).hasSize(1);
            assertThat(Fakes.count(registry, "sluice.results.write.failed", "cause", "registry")).isEqualTo(2);
        }
        producer.close();
    }

    @Test
    void the_backoff_doubles_and_is_capped() {
        try (KafkaResultSink sink = new KafkaResultSink(new MockProducer<>(true, null, new StringSerializer(), NO_BYTES),
                "delivery.results", offsets, marks, Duration.ofMillis(100), registry, "test-1")) {
            assertThat(sink.backoffMs(1)).isEqualTo(100);
            assertThat(sink.backoffMs(3)).isEqualTo(400);
            assertThat(sink.backoffMs(60)).isEqualTo(KafkaResultSink.RETRY_BACKOFF_MAX.toMillis());
        }
    }

    @Test
    void the_result_schema_is_checked_at_start_and_again_with_backoff_until_the_registry_has_it() {
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        Serializer<DeliveryResult> refusingTwice = (topic, r) -> {
            assertThat(topic).isEqualTo("delivery.results");
            if (calls.incrementAndGet() <= 2) {
                throw new dev.sluice.schemas.SchemaRegistryException(403, 40301, "forbidden", false, null);
            }
            return new byte[0];
        };
        try (KafkaResultSink sink = new KafkaResultSink(new MockProducer<>(true, null, new StringSerializer(), NO_BYTES),
                "delivery.results", offsets, marks, Duration.ofMillis(10), registry, "test-1")) {
            sink.checkSchema(refusingTwice);
            await().atMost(Duration.ofSeconds(5)).until(() -> calls.get() == 3);
        }
        assertThat(calls.get()).as("no check after it worked").isEqualTo(3);
    }

    @Test
    void a_parts_result_goes_to_the_parts_topic_and_every_other_result_to_the_results_topic() {
        MockProducer<String, DeliveryResult> producer = new MockProducer<>(true, null, new StringSerializer(), NO_BYTES);
        try (KafkaResultSink sink = new KafkaResultSink(producer, "delivery.results", "delivery.parts", offsets, marks,
                Duration.ofMillis(10), registry, "test-1")) {
            DeliveryResult part = DeliveryResult.newBuilder(delivered("n#2/3"))
                    .setPart(dev.sluice.avro.MessagePart.newBuilder().setIndex(2).setCount(3).setParentId("n").build()).build();
            sink.emit(pending(1, "n#2/3"), part);
            sink.emit(pending(2, "m"), delivered("m"));
            assertThat(producer.history()).extracting(r -> r.topic() + " " + r.key() + " " + r.value().getMessageId())
                    .containsExactly("delivery.parts 42 n#2/3", "delivery.results 42 m");
            assertThat(offsets.committable(tp)).as("both done once written").isEqualTo(3);
            assertThat(marks.get("bot", "n#2/3").state()).isEqualTo(SentMarks.State.RESULT_WRITTEN);
        }
    }
}
