package dev.sluice.schemas;

import java.util.Map;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Kafka {@link Serde} for Avro SpecificRecords in the Confluent wire format (magic byte 0, 4-byte
 * big-endian schema id, Avro binary; subject {@code <topic>-value} or {@code <topic>-key}). Byte
 * compatible with Confluent's {@code KafkaAvroSerializer}/{@code SpecificAvroSerde}.
 *
 * <p>Use {@code new SpecificAvroSerde<>(registry, Notification.class)} in code, or the no-arg
 * constructor plus {@link #configure} with {@code schema.registry.url} and {@code sluice.avro.type}
 * when a Kafka client instantiates it by class name. See {@link SpecificAvroSerializer} and
 * {@link SpecificAvroDeserializer} for errors.
 */
public final class SpecificAvroSerde<T extends SpecificRecord> implements Serde<T> {
    private SpecificAvroSerializer<T> serializer;
    private SpecificAvroDeserializer<T> deserializer;

    /** For Kafka clients configured by class name; call {@link #configure} before use. */
    public SpecificAvroSerde() {
        this.serializer = new SpecificAvroSerializer<>();
        this.deserializer = new SpecificAvroDeserializer<>();
    }

    /** A value serde ({@code <topic>-value}); call {@link #configure} with isKey=true for keys. */
    public SpecificAvroSerde(SchemaRegistryClient client, Class<T> type) {
        this.serializer = new SpecificAvroSerializer<>(client, false);
        this.deserializer = new SpecificAvroDeserializer<>(client, type);
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        serializer.configure(configs, isKey);
        deserializer.configure(configs, isKey);
    }

    @Override
    public Serializer<T> serializer() {
        return serializer;
    }

    @Override
    public Deserializer<T> deserializer() {
        return deserializer;
    }
}
