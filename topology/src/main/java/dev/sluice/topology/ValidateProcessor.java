package dev.sluice.topology;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.Notification;
import dev.sluice.chat.ChatIds;
import dev.sluice.schemas.SchemaRegistryException;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.streams.processor.api.ContextualProcessor;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Step 1 of DESIGN.md's topology: reads the raw bytes of a source record as a {@link Notification}
 * (Confluent wire format), validates it ({@link NotificationValidator} with {@code text.too.long}, including {@code not_before} against
 * {@code schedule.max.horizon.ms} on the wall clock) and normalises its {@code chat_id} ({@link ChatIds}), so
 * the repartition key, the stores, the outbox key and {@code chat_id} all use the normalised id.
 *
 * <p>Forwards every record to one named child (issue 21 session 9: no split, branch or map nodes in between): a valid
 * one keyed by its normalised chat id to {@code <lane>-route} when the producer keyed it so in that key's partition
 * ({@link ChatKeyedInput}), else to the {@code by-chat} repartition; any other, with its original key and value bytes and the
 * {@link DeadLetterHeaders} added, to {@code <lane>-dlq-sink}, so the stream keeps running and nothing is lost, plus a
 * FAILED result carrying the reason to {@code <lane>-dlq-results-sink} when the notification's id could be read (an id
 * over {@value #MAX_RESULT_ID_BYTES} bytes shortened in it, so the result itself stays small). Reasons echo at most the
 * first 40 characters of a value and its length ({@link NotificationValidator#shortened}), never a whole oversized id. A retriable registry failure (registry down) is not the record's fault: it is rethrown, the stream
 * thread fails and is replaced, and the record is read again from the last commit. Stateless; one instance
 * per task, used by its stream thread only.
 */
final class ValidateProcessor extends ContextualProcessor<byte[], byte[], Object, Object> {
    private static final Logger log = LoggerFactory.getLogger(ValidateProcessor.class);
    /** Largest id a dead-letter result carries whole (a longer one is carried shortened: {@link #resultFor}). */
    static final int MAX_RESULT_ID_BYTES = 64 * 1024;
    /** Characters of an over-long id a dead-letter result's {@code message_id} keeps. */
    static final int RESULT_ID_PREFIX_CHARS = 64;
    private final Deserializer<Notification> deserializer;
    private final LaneSpec spec;
    private final long scheduleMaxHorizonMs;
    private final ChatKeyedInput keyedInput;
    private final int maxParts;
    private final TopologyCounters counters;
    private final String direct;
    private final String repartition;
    private final String dlqSink;
    private final String dlqResultsSink;

    /**
     * @param maxParts parts a too-long text may be split into: 1 with {@code text.too.long=dead-letter}, else
     *                 {@code text.split.max.parts}
     */
    ValidateProcessor(Deserializer<Notification> deserializer, LaneSpec spec, long scheduleMaxHorizonMs, ChatKeyedInput keyedInput,
                      int maxParts, TopologyCounters counters) {
        this.deserializer = deserializer;
        this.spec = spec;
        this.scheduleMaxHorizonMs = scheduleMaxHorizonMs;
        this.keyedInput = keyedInput;
        this.maxParts = maxParts;
        this.counters = counters;
        this.direct = spec.name(SluiceTopology.ROUTE);
        this.repartition = SluiceTopology.repartitionEntry(spec);
        this.dlqSink = spec.name(SluiceTopology.DLQ_SINK);
        this.dlqResultsSink = spec.name(SluiceTopology.DLQ_RESULTS_SINK);
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        RecordMetadata source = context().recordMetadata().orElse(null);
        String topic = source == null ? "unknown" : source.topic();
        Notification notification = null;
        try {
            if (record.value() == null) {
                throw new InvalidNotificationException("value", "record value is null (a tombstone), expected a Notification");
            }
            notification = deserializer.deserialize(topic, record.headers(), record.value());
            NotificationValidator.validate(notification, maxParts);
            NotificationValidator.validateNotBefore(notification, context().currentSystemTimeMs(), scheduleMaxHorizonMs);
        } catch (SchemaRegistryException e) {
            if (e.retriable()) {
                throw e;
            }
            reject(record, topic, e, null);
            return;
        } catch (RuntimeException e) {
            reject(record, topic, e, notification);
            return;
        }
        String chat = ChatIds.normalise(notification.getChatId());
        notification.setChatId(chat);
        boolean onChatPartition = source != null && keyedInput.onChatPartition(topic, source.partition(), record.key(), chat);
        // keyed by the chat id from here on: straight to the route when the record is in its chat's partition, else through
        // the by-chat repartition (record timestamp and headers kept on both paths)
        context().forward(record.<Object>withKey(chat).<Object>withValue(notification), onChatPartition ? direct : repartition);
    }

    private void reject(Record<byte[], byte[]> record, String topic, RuntimeException error, Notification read) {
        Headers headers = new RecordHeaders();
        for (Header h : record.headers()) {
            if (!h.key().startsWith(DeadLetterHeaders.PREFIX)) {
                headers.add(h);
            }
        }
        RecordMetadata meta = context().recordMetadata().orElse(null);
        String reason = error.getMessage() == null ? error.getClass().getSimpleName() : error.getMessage();
        headers.add(DeadLetterHeaders.REASON, utf8(reason));
        headers.add(DeadLetterHeaders.SOURCE_TOPIC, utf8(topic));
        headers.add(DeadLetterHeaders.SOURCE_PARTITION, utf8(meta == null ? "-1" : Integer.toString(meta.partition())));
        headers.add(DeadLetterHeaders.SOURCE_OFFSET, utf8(meta == null ? "-1" : Long.toString(meta.offset())));
        headers.add(DeadLetterHeaders.ERROR_CLASS, utf8(error.getClass().getName()));
        log.warn("dead-lettering record from {}-{}@{}: {}", topic, meta == null ? -1 : meta.partition(),
                meta == null ? -1 : meta.offset(), reason);
        DeliveryResult result = resultFor(read, reason);
        counters.deadLettered(spec.lane());
        context().forward(new Record<Object, Object>(record.key(), record.value(), record.timestamp(), headers), dlqSink);
        if (result != null) { // a dead letter whose id could be read also ends with a FAILED result carrying the reason
            counters.result(spec.lane(), result.getEventClass(), result.getStatus());
            context().forward(new Record<Object, Object>(result.getChatId(), result, record.timestamp(), headers), dlqResultsSink);
        }
    }

    /**
     * The FAILED result for a notification that was read but is invalid, when it has an id; else null. Its
     * {@code message_id} is the id (what the producer correlates the result with); an id over
     * {@value #MAX_RESULT_ID_BYTES} bytes is carried as its first {@value #RESULT_ID_PREFIX_CHARS} characters and its
     * length, said in the reason, so the notification still ends with exactly one result and the result stays small.
     */
    private DeliveryResult resultFor(Notification read, String reason) {
        if (read == null || read.getId() == null || read.getId().isBlank()) {
            return null;
        }
        String id = read.getId();
        if (id.getBytes(StandardCharsets.UTF_8).length > MAX_RESULT_ID_BYTES) {
            int keep = Character.isHighSurrogate(id.charAt(RESULT_ID_PREFIX_CHARS - 1)) ? RESULT_ID_PREFIX_CHARS - 1 : RESULT_ID_PREFIX_CHARS;
            id = id.substring(0, keep) + "\u2026 (" + id.length() + " characters)";
            reason = reason + "; message_id is the id's first " + RESULT_ID_PREFIX_CHARS + " characters";
        }
        return Outbound.deadLettered(id, limited(read.getBotId()), limited(ChatIds.normalise(read.getChatId())),
                read.getEventClass(), spec.lane(), spec.dlqTopic(), reason, context().currentSystemTimeMs());
    }

    /** A chat or bot id small enough to key and carry a result (an oversized one is replaced by empty). */
    private static String limited(String value) {
        return value == null || value.getBytes(StandardCharsets.UTF_8).length > MAX_RESULT_ID_BYTES ? null : value;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
