package dev.sluice.schemas;

import dev.sluice.config.ConfigException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Reads Confluent wire-format bytes ({@link WireFormat}) into a {@link SpecificRecord} of type T. The
 * writer schema is fetched by id (cached) and resolved to the reader schema {@code T.getClassSchema()},
 * so records written with an older or newer compatible schema are read (Avro schema resolution: a
 * field missing in the writer takes the reader's default).
 *
 * <p>Errors, all {@link SerializationException} naming topic and size, for data that can never be read:
 * not the wire format (wrong magic byte), truncated, unknown schema id (registry 40403 or another
 * permanent registry error), schemas that do not resolve, invalid Avro binary, trailing bytes.
 * A retriable registry failure (registry down) is rethrown as the {@link SchemaRegistryException}
 * itself: the record is fine, the read should be retried, not dead-lettered.
 */
public final class SpecificAvroDeserializer<T extends SpecificRecord> implements Deserializer<T> {
    private SchemaRegistryClient registry;
    private Class<T> type;
    private Schema readerSchema;
    private final Map<Integer, SpecificDatumReader<T>> readers = new ConcurrentHashMap<>();

    /** For Kafka clients configured by class name; call {@link #configure} before use. */
    public SpecificAvroDeserializer() {
    }

    public SpecificAvroDeserializer(SchemaRegistryClient registry, Class<T> type) {
        this.registry = registry;
        setType(type);
    }

    /**
     * Reads {@code sluice.avro.type} (the SpecificRecord class name) unless a type was given, and
     * {@code schema.registry.url} (and the other {@link CachedSchemaRegistryClient} keys) unless a
     * client was given.
     */
    @Override
    @SuppressWarnings("unchecked")
    public void configure(Map<String, ?> configs, boolean isKey) {
        if (type == null) {
            Object raw = configs.get(WireFormat.AVRO_TYPE_CONFIG);
            if (raw instanceof Class<?> c) {
                setType((Class<T>) c);
            } else if (raw != null) {
                try {
                    setType((Class<T>) Class.forName(raw.toString().trim(), true, Thread.currentThread().getContextClassLoader() != null
                            ? Thread.currentThread().getContextClassLoader() : getClass().getClassLoader()));
                } catch (ClassNotFoundException | ClassCastException e) {
                    throw new ConfigException(WireFormat.AVRO_TYPE_CONFIG, "invalid value '" + raw + "' for config '"
                            + WireFormat.AVRO_TYPE_CONFIG + "': expected the class name of an Avro SpecificRecord");
                }
            } else {
                throw new ConfigException(WireFormat.AVRO_TYPE_CONFIG, "missing required config '" + WireFormat.AVRO_TYPE_CONFIG
                        + "' (class name of the Avro SpecificRecord to read, e.g. dev.sluice.avro.Notification)");
            }
        }
        if (registry == null) {
            registry = CachedSchemaRegistryClient.fromConfigs(configs);
        }
    }

    private void setType(Class<T> type) {
        if (!SpecificRecord.class.isAssignableFrom(type)) {
            throw new ConfigException(WireFormat.AVRO_TYPE_CONFIG, type.getName() + " is not an Avro SpecificRecord");
        }
        this.type = type;
        this.readerSchema = SpecificData.get().getSchema(type);
        AvroClassTrust.trust(readerSchema);
    }

    @Override
    public T deserialize(String topic, byte[] data) {
        if (data == null) {
            return null;
        }
        if (registry == null || type == null) {
            throw new IllegalStateException("SpecificAvroDeserializer not configured: registry or type missing");
        }
        if (data.length < WireFormat.HEADER_LENGTH) {
            throw new SerializationException("truncated record: " + data.length + " bytes, the Confluent wire format needs at least "
                    + WireFormat.HEADER_LENGTH + " (magic byte and 4-byte schema id) (topic " + topic + ")");
        }
        if (data[0] != WireFormat.MAGIC_BYTE) {
            throw new SerializationException(String.format("not Confluent wire format: magic byte 0x%02x, expected 0x00 (topic %s, %d bytes)",
                    data[0] & 0xff, topic, data.length));
        }
        int id = ByteBuffer.wrap(data, 1, 4).getInt();
        SpecificDatumReader<T> reader = readerFor(id, topic, data.length);
        try {
            BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(data, WireFormat.HEADER_LENGTH,
                    data.length - WireFormat.HEADER_LENGTH, null);
            T value = reader.read(null, decoder);
            if (!decoder.isEnd()) {
                throw new SerializationException("invalid Avro for schema id " + id + ": trailing bytes after the record (topic "
                        + topic + ", " + data.length + " bytes)");
            }
            return value;
        } catch (IOException | AvroRuntimeException | IndexOutOfBoundsException | NegativeArraySizeException
                 | ClassCastException | IllegalArgumentException e) {
            throw new SerializationException("invalid Avro binary for schema id " + id + " read as " + readerSchema.getFullName()
                    + " (topic " + topic + ", " + data.length + " bytes): " + e.getClass().getSimpleName() + " " + e.getMessage(), e);
        }
    }

    private SpecificDatumReader<T> readerFor(int id, String topic, int length) {
        SpecificDatumReader<T> cached = readers.get(id);
        if (cached != null) {
            return cached;
        }
        Schema writer;
        try {
            writer = registry.getById(id);
        } catch (SchemaRegistryException e) {
            if (e.retriable()) {
                throw e;
            }
            throw new SerializationException("unknown schema id " + id + " (topic " + topic + ", " + length
                    + " bytes): registry error_code " + e.errorCode() + ": " + e.getMessage(), e);
        }
        if (writer.getType() != Schema.Type.RECORD || !compatibleNames(writer)) {
            throw new SerializationException("schema id " + id + " is " + writer.getFullName() + ", cannot be read as "
                    + readerSchema.getFullName() + " (topic " + topic + ", " + length + " bytes)");
        }
        SpecificDatumReader<T> reader = new SpecificDatumReader<>(writer, readerSchema, SpecificData.getForClass(type));
        readers.putIfAbsent(id, reader);
        return reader;
    }

    /** Avro resolution matches records by full name (or alias); a different record type is a wrong-topic write. */
    private boolean compatibleNames(Schema writer) {
        return writer.getFullName().equals(readerSchema.getFullName())
                || readerSchema.getAliases().contains(writer.getFullName())
                || writer.getName().equals(readerSchema.getName());
    }

    /** The reader schema ({@code T.getClassSchema()}). */
    public Schema readerSchema() {
        return readerSchema;
    }
}
