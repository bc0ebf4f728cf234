package dev.sluice.topology;

import dev.sluice.avro.Notification;
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
 * (Confluent wire format) and validates it ({@link NotificationValidator}).
 *
 * <p>Forwards every record, keeping the original key: a valid one as {@link Checked#valid}; any other
 * as {@link Checked#rejected} with the original value bytes and the {@link DeadLetterHeaders} added,
 * so the stream keeps running and nothing is lost. A retriable registry failure (registry down) is not
 * the record's fault: it is rethrown, the stream thread fails and is replaced, and the record is read
 * again from the last commit.
 */
final class ValidateProcessor extends ContextualProcessor<byte[], byte[], byte[], Checked> {
    private static final Logger log = LoggerFactory.getLogger(ValidateProcessor.class);
    private final Deserializer<Notification> deserializer;

    ValidateProcessor(Deserializer<Notification> deserializer) {
        this.deserializer = deserializer;
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        String topic = context().recordMetadata().map(RecordMetadata::topic).orElse("unknown");
        Notification notification;
        try {
            if (record.value() == null) {
                throw new InvalidNotificationException("value", "record value is null (a tombstone), expected a Notification");
            }
            notification = deserializer.deserialize(topic, record.headers(), record.value());
            NotificationValidator.validate(notification);
        } catch (SchemaRegistryException e) {
            if (e.retriable()) {
                throw e;
            }
            reject(record, topic, e);
            return;
        } catch (RuntimeException e) {
            reject(record, topic, e);
            return;
        }
        context().forward(record.withValue(Checked.valid(notification)));
    }

    private void reject(Record<byte[], byte[]> record, String topic, RuntimeException error) {
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
        context().forward(new Record<>(record.key(), Checked.rejected(record.value()), record.timestamp(), headers));
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
