package dev.sluice.sender;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.metrics.SluiceMetrics;
import dev.sluice.schemas.SchemaRegistryException;
import dev.sluice.schemas.WireFormat;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the sender does with an outbox record it cannot read ({@link RecordDeserializationException} from a
 * poll). Never skips one with only a log line:
 * <ul>
 * <li><b>Transient</b> (the registry is unreachable, answers 5xx, times out, refuses the credentials, or does not
 *     know the writer schema id yet, within {@code sender.unreadable.schema.grace.ms} of the first try: a replica
 *     that lags): the partition's position goes back to the record and the partition is held (paused) with
 *     exponential backoff from {@code sender.retry.backoff.ms} up to {@link #HOLD_MAX}, then read again; counted in
 *     {@value SluiceMetrics#OUTBOX_READ_RETRIES}. Its offset is never committed past.</li>
 * <li><b>Permanent</b> (not the Confluent wire format, truncated, invalid Avro, a writer schema of another type,
 *     a schema id the registry still does not know after the grace): the record's bytes go to the sender's
 *     dead-letter topic ({@code topic.outbox.dlq}) with headers {@code sluice.dlq.reason},
 *     {@code sluice.dlq.source.topic/partition/offset}, {@code sluice.dlq.error.class} and
 *     {@code sluice.dlq.sender.instance}; then a FAILED result when the message can still be decoded with the
 *     sender's own schema (so its id is known), counted in {@value SluiceMetrics#OUTBOX_DEAD_LETTERED} per reason,
 *     and the partition moves past it. If the dead-letter write fails, the record is held and tried again.</li>
 * </ul>
 *
 * <p>Thread: only the sender's poll thread (it owns the consumer); no locking.
 */
final class UnreadableRecords {
    private static final Logger log = LoggerFactory.getLogger(UnreadableRecords.class);
    /** The longest a partition waits between two reads of a record that failed for a transient cause. */
    static final Duration HOLD_MAX = Duration.ofSeconds(5);
    /** How long the poll thread waits for the dead-letter topic to acknowledge one record. */
    static final Duration DLQ_WRITE_TIMEOUT = Duration.ofSeconds(10);
    static final String HEADER_INSTANCE = "sluice.dlq.sender.instance";

    private final Consumer<String, OutboundMessage> consumer;
    private final Producer<byte[], byte[]> dlq;
    private final String dlqTopic;
    private final ResultSink results;
    private final OffsetTracker offsets;
    private final Clock clock;
    private final Duration schemaGrace;
    private final Duration backoff;
    private final String instanceId;
    private final MeterRegistry registry;
    private final Counter retries;
    private final Map<String, Counter> deadLettered = new HashMap<>();
    private final Map<TopicPartition, Hold> holds = new HashMap<>();

    /** A partition held at {@code offset} until {@code untilMs}; {@code firstMs}: when that record first failed. */
    private record Hold(long offset, long firstMs, int attempts, long untilMs) {
    }

    UnreadableRecords(Consumer<String, OutboundMessage> consumer, Producer<byte[], byte[]> dlq, String dlqTopic,
                      ResultSink results, OffsetTracker offsets, Clock clock, Duration schemaGrace, Duration backoff,
                      String instanceId, MeterRegistry registry) {
        this.consumer = consumer;
        this.dlq = dlq;
        this.dlqTopic = dlqTopic;
        this.results = results;
        this.offsets = offsets;
        this.clock = clock;
        this.schemaGrace = schemaGrace;
        this.backoff = backoff;
        this.instanceId = instanceId;
        this.registry = registry;
        this.retries = Counter.builder(SluiceMetrics.OUTBOX_READ_RETRIES)
                .description("Outbox reads that failed for a transient cause (registry) and are read again")
                .register(registry);
        for (String reason : SluiceMetrics.OUTBOX_DEAD_LETTER_REASONS) {
            deadLettered(reason);
        }
    }

    private Counter deadLettered(String reason) {
        return deadLettered.computeIfAbsent(reason, r -> Counter.builder(SluiceMetrics.OUTBOX_DEAD_LETTERED)
                .tag(SluiceMetrics.TAG_REASON, r)
                .description("Outbox records this sender can never read, written to its dead-letter topic")
                .register(registry));
    }

    /**
     * A poll failed on this record: hold its partition (transient) or dead-letter it and move past (permanent).
     *
     * @return true when the record was dead-lettered (its partition moves past it)
     */
    boolean handle(RecordDeserializationException e) {
        TopicPartition tp = e.topicPartition();
        long offset = e.offset();
        long now = clock.millis();
        Hold previous = holds.get(tp);
        long firstMs = previous != null && previous.offset() == offset ? previous.firstMs() : now;
        String permanent = permanentReason(e, now - firstMs);
        offsets.received(tp, offset); // never committed past until it is read or dead-lettered
        if (permanent == null) {
            hold(tp, offset, firstMs, previous, now, e);
            return false;
        }
        if (!deadLetter(e, permanent)) {
            hold(tp, offset, firstMs, previous, now, e);
            return false;
        }
        holds.remove(tp);
        deadLettered(permanent).increment();
        OutboundMessage decoded = decodeWithOwnSchema(e.valueBuffer());
        if (decoded != null) {
            PendingMessage p = new PendingMessage(tp, offset, decoded);
            results.emit(p, failedResult(decoded, "unreadable outbox record (" + permanent + "), written to "
                    + dlqTopic + ": " + describe(e)));
        } else {
            offsets.done(tp, offset);
        }
        log.error("outbox record {}@{} can never be read ({}): written to {}{}: {}", tp, offset, permanent, dlqTopic,
                decoded == null ? " (no id readable, no result)" : " with a FAILED result for " + decoded.getId(),
                describe(e));
        consumer.seek(tp, offset + 1);
        return true;
    }

    private void hold(TopicPartition tp, long offset, long firstMs, Hold previous, long now,
                      RecordDeserializationException e) {
        int attempts = previous != null && previous.offset() == offset ? previous.attempts() + 1 : 1;
        long waitMs = Math.min(HOLD_MAX.toMillis(), backoff.toMillis() << Math.min(20, attempts - 1));
        holds.put(tp, new Hold(offset, firstMs, attempts, now + waitMs));
        retries.increment();
        consumer.seek(tp, offset);
        log.warn("outbox record {}@{} unreadable for now (attempt {}): {}; partition held for {} ms", tp, offset,
                attempts, describe(e), waitMs);
    }

    /**
     * Partitions to keep paused now (their record waits for its next read); holds whose wait passed are released,
     * and the partition is read again from the record. A hold is forgotten only when its record was read or
     * dead-lettered (a read that fails again renews it).
     */
    Set<TopicPartition> held(long nowMs) {
        Set<TopicPartition> out = new HashSet<>();
        holds.forEach((tp, h) -> {
            if (h.untilMs() > nowMs) {
                out.add(tp);
            }
        });
        return out;
    }

    /** The partition's record was read after all: its hold ends. */
    void readPast(TopicPartition tp, long offset) {
        Hold h = holds.get(tp);
        if (h != null && offset >= h.offset()) {
            holds.remove(tp);
        }
    }

    /** Revoked or lost partitions: their records are the next owner's. */
    void forget(Collection<TopicPartition> partitions) {
        partitions.forEach(holds::remove);
    }

    /** Null for a transient cause (read again later), else the dead-letter reason. */
    private String permanentReason(RecordDeserializationException e, long failingForMs) {
        SchemaRegistryException registryError = null;
        for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
            if (t instanceof SchemaRegistryException sre) {
                registryError = sre;
                break;
            }
        }
        if (registryError == null) {
            ByteBuffer value = e.valueBuffer();
            boolean wireFormat = value != null && value.remaining() >= WireFormat.HEADER_LENGTH
                    && value.get(value.position()) == WireFormat.MAGIC_BYTE;
            if (e.getCause() instanceof org.apache.kafka.common.errors.SerializationException || !wireFormat) {
                return wireFormat ? "invalid_record" : "not_wire_format";
            }
            return null; // anything else from the deserializer (out of memory, a bug): never dead-letter on it
        }
        if (registryError.errorCode() == SchemaRegistryException.SCHEMA_NOT_FOUND) {
            // A replica that lags may not know an id the primary just gave out: permanent only after the grace.
            return failingForMs >= schemaGrace.toMillis() ? "schema_not_found" : null;
        }
        if (registryError.errorCode() == SchemaRegistryException.INVALID_SCHEMA && !registryError.retriable()) {
            return "invalid_writer_schema";
        }
        return null; // unreachable, 5xx, timeout, 401/403 (credentials): the record is fine, the registry is not
    }

    /** Writes the record's bytes and the reason to the dead-letter topic; false when that failed (held, retried). */
    private boolean deadLetter(RecordDeserializationException e, String reason) {
        TopicPartition tp = e.topicPartition();
        RecordHeaders headers = new RecordHeaders();
        if (e.headers() != null) {
            for (Header h : e.headers()) {
                headers.add(h);
            }
        }
        headers.add("sluice.dlq.reason", utf8(reason + ": " + describe(e)));
        headers.add("sluice.dlq.source.topic", utf8(tp.topic()));
        headers.add("sluice.dlq.source.partition", utf8(Integer.toString(tp.partition())));
        headers.add("sluice.dlq.source.offset", utf8(Long.toString(e.offset())));
        headers.add("sluice.dlq.error.class", utf8(e.getCause() == null ? e.getClass().getName()
                : e.getCause().getClass().getName()));
        headers.add(HEADER_INSTANCE, utf8(instanceId));
        ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(dlqTopic, null,
                e.timestamp() < 0 ? null : e.timestamp(), bytes(e.keyBuffer()), bytes(e.valueBuffer()), headers);
        try {
            dlq.send(record).get(DLQ_WRITE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            return false;
        } catch (Exception ex) {
            log.warn("could not write outbox record {}@{} to {} ({}); it is held and tried again", tp, e.offset(),
                    dlqTopic, ex.toString());
            return false;
        }
    }

    private DeliveryResult failedResult(OutboundMessage m, String reason) {
        return DeliveryResult.newBuilder().setMessageId(m.getId()).setBotId(m.getBotId()).setChatId(m.getChatId())
                .setStatus(DeliveryStatus.FAILED).setEventClass(m.getEventClass()).setLane(m.getLane())
                .setReason(reason).setAttempts(0).setDueAt(m.getDueAt()).setResultAt(Instant.ofEpochMilli(clock.millis()))
                .setDigestCount(m.getDigestCount()).setFoldedIds(List.copyOf(m.getFoldedIds()))
                .setSenderInstance(instanceId).setPart(m.getPart()).build();
    }

    /**
     * The message read as if written with the sender's own OutboundMessage schema (the usual case of an id the
     * registry lost: same schema, new id), or null when the bytes do not parse completely that way.
     */
    static OutboundMessage decodeWithOwnSchema(ByteBuffer value) {
        byte[] data = bytes(value);
        if (data == null || data.length <= WireFormat.HEADER_LENGTH || data[0] != WireFormat.MAGIC_BYTE) {
            return null;
        }
        try {
            BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(data, WireFormat.HEADER_LENGTH,
                    data.length - WireFormat.HEADER_LENGTH, null);
            OutboundMessage m = new SpecificDatumReader<>(OutboundMessage.class).read(null, decoder);
            return decoder.isEnd() && m.getId() != null && !m.getId().isEmpty() ? m : null;
        } catch (Exception | StackOverflowError e) {
            return null;
        }
    }

    private static String describe(RecordDeserializationException e) {
        Throwable cause = e.getCause() == null ? e : e.getCause();
        String text = cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
        return text.length() <= 500 ? text : text.substring(0, 500) + "...";
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] bytes(ByteBuffer b) {
        if (b == null) {
            return null;
        }
        ByteBuffer copy = b.duplicate();
        byte[] out = new byte[copy.remaining()];
        copy.get(out);
        return out;
    }
}
