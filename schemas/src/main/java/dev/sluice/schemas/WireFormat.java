package dev.sluice.schemas;

/**
 * The Confluent wire format of a Kafka record key or value:
 * <pre>
 * byte 0      magic byte, always 0x00
 * bytes 1..4  schema id, 4-byte big-endian signed int (the registry's global id)
 * bytes 5..   Avro binary encoding of the datum, written with that schema
 * </pre>
 * Subjects use the TopicNameStrategy: {@code <topic>-value} or {@code <topic>-key}.
 */
public final class WireFormat {
    public static final byte MAGIC_BYTE = 0x0;
    /** Magic byte plus schema id. */
    public static final int HEADER_LENGTH = 5;
    /** Config key naming the SpecificRecord class a configured-by-name deserializer produces. */
    public static final String AVRO_TYPE_CONFIG = "sluice.avro.type";

    private WireFormat() {
    }

    /** The subject for a topic: {@code <topic>-key} or {@code <topic>-value}. */
    public static String subject(String topic, boolean isKey) {
        return topic + (isKey ? "-key" : "-value");
    }
}
