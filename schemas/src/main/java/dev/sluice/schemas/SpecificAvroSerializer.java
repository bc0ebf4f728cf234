package dev.sluice.schemas;

import java.io.IOException;
import java.util.List;
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
 * <p>Per record (issue 21): one map lookup by topic gives the subject's schema id and the writer kept for the record's
 * schema (the registry is asked again only for a schema not seen on that topic), and nullable unions
 * ({@code ["null", X]}) are resolved by null-ness instead of Avro's name lookup ({@link NullableUnionWriter}); the bytes
 * are the same as Avro's {@code SpecificDatumWriter} writes. Thread-safe (shared by the stream threads of a topology).
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
    /** Per topic: the last schema written there, its id under the topic's subject and its writer (immutable entries). */
    private final Map<String, Target<T>> targets = new ConcurrentHashMap<>();

    /** What a record of {@code schema} needs on one topic: its schema id there and its writer. */
    private record Target<T>(Schema schema, int id, SpecificDatumWriter<T> writer) {
    }

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
        targets.clear(); // the subject (key or value) and register-or-look-up may have changed
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
        Target<T> target = topic == null ? null : targets.get(topic);
        if (target == null || target.schema() != schema) {
            target = target(topic, schema, data);
        }
        int id = target.id();
        SpecificDatumWriter<T> writer = target.writer();
        ReusableOutput out = ReusableOutput.OF_THREAD.get();
        out.start(id);
        byte[] bytes;
        try {
            writer.write(data, out.encoder);
            out.encoder.flush();
            bytes = out.bytes();
        } catch (IOException | RuntimeException e) {
            throw new SerializationException("cannot write " + schema.getFullName() + " as Avro (topic " + topic
                    + ", schema id " + id + "): " + e.getMessage(), e);
        } finally {
            out.finish();
        }
        return bytes;
    }

    /** Registers (or looks up) {@code schema} under the topic's subject, and keeps it with its writer for the topic. */
    private Target<T> target(String topic, Schema schema, T data) {
        String subject = WireFormat.subject(topic, isKey);
        int id = autoRegister ? registry.register(subject, schema) : registry.lookup(subject, schema);
        SpecificDatumWriter<T> writer = writers.computeIfAbsent(schema, s -> {
            AvroClassTrust.trust(s);
            return new NullableUnionWriter<>(s, SpecificData.getForClass(data.getClass()));
        });
        Target<T> target = new Target<>(schema, id, writer);
        if (topic != null) {
            targets.put(topic, target);
        }
        return target;
    }

    /**
     * The bytes of one record being written, and the Avro encoder writing into them, kept per thread (issue 21: a new
     * {@code ByteArrayOutputStream} per record grew from 128 bytes by copies, with a lock per write, and a new encoder and
     * header buffer: ~3 % of the topology's stream thread). Not synchronized: used by its own thread only, one record at a
     * time ({@link #start} to {@link #bytes}). Bounded: a buffer grown past {@link #KEPT_MAX_BYTES} by a large record is
     * dropped after it, so a thread keeps at most that much.
     */
    static final class ReusableOutput extends java.io.OutputStream {
        static final int INITIAL_BYTES = 512;
        static final int KEPT_MAX_BYTES = 64 * 1024;
        static final ThreadLocal<ReusableOutput> OF_THREAD = ThreadLocal.withInitial(ReusableOutput::new);
        private byte[] buf = new byte[INITIAL_BYTES];
        private int count;
        final BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(this, null);

        /** Empties the buffer and writes the wire format's header: the magic byte and the schema id (big-endian). */
        void start(int schemaId) {
            count = 0;
            ensure(WireFormat.HEADER_LENGTH);
            buf[0] = WireFormat.MAGIC_BYTE;
            buf[1] = (byte) (schemaId >>> 24);
            buf[2] = (byte) (schemaId >>> 16);
            buf[3] = (byte) (schemaId >>> 8);
            buf[4] = (byte) schemaId;
            count = WireFormat.HEADER_LENGTH;
        }

        /** A copy of what was written since {@link #start}. */
        byte[] bytes() {
            return java.util.Arrays.copyOf(buf, count);
        }

        /** After a record: a buffer grown past the bound is replaced (see the class comment). */
        void finish() {
            if (buf.length > KEPT_MAX_BYTES) {
                buf = new byte[INITIAL_BYTES];
                count = 0;
            }
        }

        int keptBytes() {
            return buf.length;
        }

        @Override
        public void write(int b) {
            ensure(1);
            buf[count++] = (byte) b;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            ensure(len);
            System.arraycopy(b, off, buf, count, len);
            count += len;
        }

        private void ensure(int more) {
            int need = count + more;
            if (need > buf.length) {
                buf = java.util.Arrays.copyOf(buf, Math.max(need, buf.length * 2));
            }
        }
    }

    /**
     * Avro's {@link SpecificDatumWriter} with one shortcut: a union of {@code null} and one other type (every optional field
     * of Sluice's schemas) is resolved by whether the datum is null. Avro's own resolution looks the datum's type name up in
     * the union's name map, a string hash per optional field per record (~20% of writing an outbound message, issue 21
     * session 10). The branch chosen is the one Avro chooses for a datum of the right type, so the bytes are the same; a
     * datum of a wrong type fails when the branch is written, as it fails in Avro. Other unions go through Avro.
     */
    static final class NullableUnionWriter<T> extends SpecificDatumWriter<T> {
        NullableUnionWriter(Schema schema, SpecificData data) {
            super(schema, data);
        }

        @Override
        protected int resolveUnion(Schema union, Object datum) {
            List<Schema> types = union.getTypes();
            if (types.size() == 2) {
                int nullIndex = types.get(0).getType() == Schema.Type.NULL ? 0 : types.get(1).getType() == Schema.Type.NULL ? 1 : -1;
                if (nullIndex >= 0) {
                    return datum == null ? nullIndex : 1 - nullIndex;
                }
            }
            return super.resolveUnion(union, datum);
        }
    }
}
