package dev.sluice.topology;

/**
 * Headers the topology adds to a record it writes to the dead-letter topic ({@code notifications.dlq}).
 * The key and value are the original bytes, unchanged, and the original headers are kept, so a fixed
 * record can be replayed as it was. All header values are UTF-8 text.
 */
public final class DeadLetterHeaders {
    /** Why the record was rejected, readable: names the field and value, or the serde problem. */
    public static final String REASON = "sluice.dlq.reason";
    /** Topic the record was read from. */
    public static final String SOURCE_TOPIC = "sluice.dlq.source.topic";
    /** Partition the record was read from (decimal). */
    public static final String SOURCE_PARTITION = "sluice.dlq.source.partition";
    /** Offset of the record in that partition (decimal). */
    public static final String SOURCE_OFFSET = "sluice.dlq.source.offset";
    /** Class name of the error, e.g. {@code org.apache.kafka.common.errors.SerializationException}. */
    public static final String ERROR_CLASS = "sluice.dlq.error.class";
    /** Prefix shared by all of the above (removed before re-adding, so a replayed record carries one set). */
    public static final String PREFIX = "sluice.dlq.";

    private DeadLetterHeaders() {
    }
}
