package dev.sluice.topology;

import dev.sluice.schemas.SchemaRegistryException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;

/**
 * Decoding of a side-input record (delivery results, part results, chat events) read by a processor as raw bytes.
 * A transient registry error is rethrown so Kafka Streams retries the record; a permanently unreadable record is
 * logged and skipped (these topics are written by Sluice's own processes: a notification is never on them).
 * Stateless; called on the stream thread of the processor that owns the record.
 */
final class SideInputRecords {

    private SideInputRecords() {
    }

    /** The decoded value, or null for a tombstone or an unreadable record (logged on {@code log}). */
    static <T> T decodeOrSkip(Deserializer<T> deserializer, ProcessorContext<?, ?> context,
                              Record<byte[], byte[]> record, Logger log) {
        if (record.value() == null) {
            return null;
        }
        String topic = context.recordMetadata().map(m -> m.topic()).orElse("unknown");
        try {
            return deserializer.deserialize(topic, record.headers(), record.value());
        } catch (SchemaRegistryException e) {
            if (e.retriable()) {
                throw e;
            }
            log.warn("skipping unreadable record on {}: {}", topic, e.getMessage());
            return null;
        } catch (RuntimeException e) {
            log.warn("skipping unreadable record on {}: {}", topic, e.getMessage());
            return null;
        }
    }
}
