package dev.sluice.schemas;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecord;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Writes a {@link SpecificRecord} in the Confluent wire format ({@link WireFormat}). The record's own
 * schema is registered under {@code <topic>-value} (or {@code -key}) once; the id is cached by the
 * client. A null record is written as null (a tombstone).
 *
 * <p>With {@value #AUTO_REGISTER_CONFIG}{@code =false} (or {@code autoRegister} false) the schema is only
 * looked up ({@link SchemaRegistryClient#lookup}), never registered: for read-only registry credentials, where
 * the schemas are registered by a deploy step or the topology.
 *
 * <p>Errors: registry failures surface as {@link SchemaRegistryException} (retriable or permanent);
 * an Avro encoding failure (e.g. a required field left null) as {@link SerializationException}
 * naming the topic and the problem.
 */
public final class SpecificAvroSerializer<T extends SpecificRecord> implements Serializer<T> {
    /** {@code false}: look the schema up, never register it (read-only registry credentials). Default true. */
    public static final String AUTO_REGISTER_CONFIG = "schema.registry.auto.register";
    private SchemaRegistryClient registry;
    private boolean isKey;
    private boolean autoRegister = true;
    private final Map<Schema, SpecificDatumWriter<T>> writers = new ConcurrentHashMap<>();

    /** For Kafka clients configured by class name; call {@link #configure} before use. */
    public SpecificAvroSerializer() {
    }

    public SpecificAvroSerializer(SchemaRegistryClient registry) {
        this(registry, false);
    }

    public SpecificAvroSerializer(SchemaRegistryClient registry, boolean isKey) {
        this(registry, isKey, true);
    }

    /** @param autoRegister false: only look the schema up ({@value #AUTO_REGISTER_CONFIG}) */
    public SpecificAvroSerializer(SchemaRegistryClient registry, boolean isKey, boolean autoRegister) {
        this.registry = registry;
        this.isKey = isKey;
        this.autoRegister = autoRegister;
    }

    /** Reads {@code schema.registry.url} (and the other {@link CachedSchemaRegistryClient} keys) unless a client was given. */
    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        this.isKey = isKey;
        Object auto = configs.get(AUTO_REGISTER_CONFIG);
        if (auto != null) {
            String v = auto.toString().trim();
            if (!v.equalsIgnoreCase("true") && !v.equalsIgnoreCase("false")) {
                throw new dev.sluice.config.ConfigException(AUTO_REGISTER_CONFIG, "invalid value '" + v
                        + "' for config '" + AUTO_REGISTER_CONFIG + "': expected true or false");
            }
            autoRegister = Boolean.parseBoolean(v);
        }
        if (registry == null) {
            registry = CachedSchemaRegistryClient.fromConfigs(configs);
        }
    }

    @Override
    public byte[] serialize(String topic, T data) {
        if (data == null) {
            return null;
        }
        if (registry == null) {
            throw new IllegalStateException("SpecificAvroSerializer not configured: no schema registry client");
        }
        Schema schema = data.getSchema();
        String subject = WireFormat.subject(topic, isKey);
        int id = autoRegister ? registry.register(subject, schema) : registry.lookup(subject, schema);
        SpecificDatumWriter<T> writer = writers.computeIfAbsent(schema, s -> {
            AvroClassTrust.trust(s);
            return new SpecificDatumWriter<>(s, SpecificData.getForClass(data.getClass()));
        });
        ByteArrayOutputStream out = new ByteArrayOutputStream(128);
        out.write(WireFormat.MAGIC_BYTE);
        out.writeBytes(ByteBuffer.allocate(4).putInt(id).array());
        try {
            BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(out, null);
            writer.write(data, encoder);
            encoder.flush();
        } catch (IOException | RuntimeException e) {
            throw new SerializationException("cannot write " + schema.getFullName() + " as Avro (topic " + topic
                    + ", schema id " + id + "): " + e.getMessage(), e);
        }
        return out.toByteArray();
    }
}
