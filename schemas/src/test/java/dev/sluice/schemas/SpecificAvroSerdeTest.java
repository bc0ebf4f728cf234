package dev.sluice.schemas;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.config.ConfigException;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

class SpecificAvroSerdeTest {
    private static final String TOPIC = "notifications";
    private final InMemorySchemaRegistryClient registry = new InMemorySchemaRegistryClient();
    private final SpecificAvroSerde<Notification> serde = new SpecificAvroSerde<>(registry, Notification.class);

    static Notification notification() {
        return Notification.newBuilder()
                .setId("n-1").setBotId("alerts").setChatId("-100123").setKind("quake.alert")
                .setEventClass(NotificationClass.CRITICAL).setText("M8.8 near Kamchatka")
                .setCreatedAt(Instant.ofEpochMilli(1_753_833_600_000L))
                .setExpiresAt(Instant.ofEpochMilli(1_753_837_200_000L))
                .setAttributes(Map.of("region", "Kamchatka")).setBotPool(List.of("alerts-2"))
                .build();
    }

    @Test
    void bytesDecodedByHandFollowTheConfluentWireFormat() throws Exception {
        byte[] bytes = serde.serializer().serialize(TOPIC, notification());

        // Decoded per the documented format, not with our deserializer.
        assertThat(bytes[0]).as("magic byte").isEqualTo((byte) 0);
        int id = ByteBuffer.wrap(bytes, 1, 4).order(java.nio.ByteOrder.BIG_ENDIAN).getInt();
        assertThat(registry.subjects()).containsExactly("notifications-value");
        assertThat(id).isEqualTo(registry.register("notifications-value", Notification.getClassSchema()));

        Schema writer = registry.getById(id);
        BinaryDecoder decoder = DecoderFactory.get().binaryDecoder(bytes, 5, bytes.length - 5, null);
        GenericRecord record = new GenericDatumReader<GenericRecord>(writer).read(null, decoder);
        assertThat(decoder.isEnd()).as("no bytes after the Avro datum").isTrue();
        assertThat(record.get("id").toString()).isEqualTo("n-1");
        assertThat(record.get("chat_id").toString()).isEqualTo("-100123");
        assertThat(record.get("event_class").toString()).isEqualTo("CRITICAL");
        assertThat(record.get("created_at")).isEqualTo(1_753_833_600_000L);
        assertThat(record.get("text").toString()).isEqualTo("M8.8 near Kamchatka");
    }

    @Test
    void roundTripsAndUsesKeySubjectForKeys() {
        assertThat(serde.deserializer().deserialize(TOPIC, serde.serializer().serialize(TOPIC, notification())))
                .isEqualTo(notification());
        SpecificAvroSerde<Notification> keySerde = new SpecificAvroSerde<>(registry, Notification.class);
        keySerde.configure(Map.of(), true);
        keySerde.serializer().serialize("other", notification());
        assertThat(registry.subjects()).contains("other-key");
        assertThat(serde.serializer().serialize(TOPIC, null)).isNull();
        assertThat(serde.deserializer().deserialize(TOPIC, null)).isNull();
    }

    @Test
    void readsAVersion1RecordWithTheVersion2ReaderSchema() throws Exception {
        // v1: Notification without the fields added later (bot_pool, attributes); both have defaults in v2.
        Schema v2 = Notification.getClassSchema();
        List<Schema.Field> v1Fields = v2.getFields().stream()
                .filter(f -> !f.name().equals("bot_pool") && !f.name().equals("attributes"))
                // v1 also predates issue 20's fields (added after attributes)
                .filter(f -> v2.getFields().indexOf(v2.getField(f.name())) < v2.getFields().indexOf(v2.getField("attributes")))
                .map(f -> new Schema.Field(f, f.schema())).toList();
        Schema v1 = Schema.createRecord(v2.getName(), v2.getDoc(), v2.getNamespace(), false, v1Fields);
        assertThat(v1.getField("attributes")).isNull();

        GenericRecord old = new GenericData.Record(v1);
        old.put("id", "n-old");
        old.put("bot_id", "alerts");
        old.put("chat_id", "42");
        old.put("kind", "task.assigned");
        old.put("text", "written before attributes existed");
        old.put("created_at", 1_000L);
        int v1Id = registry.register("notifications-value", v1);
        byte[] bytes = wire(v1Id, v1, old);

        Notification read = serde.deserializer().deserialize(TOPIC, bytes);

        assertThat(read.getId()).isEqualTo("n-old");
        assertThat(read.getChatId()).isEqualTo("42");
        assertThat(read.getCreatedAt()).isEqualTo(Instant.ofEpochMilli(1_000L));
        assertThat(read.getAttributes()).isEmpty();
        assertThat(read.getBotPool()).isEmpty();
        assertThat(read.getEventClass()).isNull();
        int v2Id = registry.register("notifications-value", v2);
        assertThat(v2Id).isNotEqualTo(v1Id);
    }

    @Test
    void rejectsBytesThatAreNotTheWireFormat() {
        byte[] json = "{\"id\":\"n-1\",\"chat_id\":\"42\",\"text\":\"hello there, this is json not avro!!\"}"
                .getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> serde.deserializer().deserialize(TOPIC, json))
                .isInstanceOf(SerializationException.class)
                .hasMessage("not Confluent wire format: magic byte 0x7b, expected 0x00 (topic notifications, " + json.length + " bytes)");
    }

    @Test
    void rejectsTruncatedRecords() {
        assertThatThrownBy(() -> serde.deserializer().deserialize(TOPIC, new byte[] {0, 0, 1}))
                .isInstanceOf(SerializationException.class)
                .hasMessageStartingWith("truncated record: 3 bytes");
    }

    @Test
    void rejectsUnknownSchemaIds() {
        byte[] bytes = ByteBuffer.allocate(8).put((byte) 0).putInt(999).put(new byte[] {2, 65, 66}).array();
        assertThatThrownBy(() -> serde.deserializer().deserialize(TOPIC, bytes))
                .isInstanceOf(SerializationException.class)
                .hasMessageStartingWith("unknown schema id 999 (topic notifications, 8 bytes)")
                .hasMessageContaining("40403");
    }

    @Test
    void rejectsGarbageAfterAValidHeader() {
        int id = registry.register("notifications-value", Notification.getClassSchema());
        byte[] header = ByteBuffer.allocate(5).put((byte) 0).putInt(id).array();
        byte[] garbage = Arrays.copyOf(header, 9);
        garbage[5] = (byte) 0xff; garbage[6] = (byte) 0xff; garbage[7] = (byte) 0xff; garbage[8] = (byte) 0x7f;
        assertThatThrownBy(() -> serde.deserializer().deserialize(TOPIC, garbage))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("invalid Avro")
                .hasMessageContaining("schema id " + id);
    }

    @Test
    void rejectsARecordOfAnotherTypeWrittenToTheTopic() {
        Schema other = new Schema.Parser().parse("{\"type\":\"record\",\"name\":\"Other\",\"fields\":[{\"name\":\"x\",\"type\":\"int\"}]}");
        GenericRecord r = new GenericData.Record(other);
        r.put("x", 1);
        byte[] bytes = wire(registry.register("notifications-value", other), other, r);
        assertThatThrownBy(() -> serde.deserializer().deserialize(TOPIC, bytes))
                .isInstanceOf(SerializationException.class)
                .hasMessageContaining("is Other, cannot be read as dev.sluice.avro.Notification");
    }

    @Test
    void aRegistryOutageIsRetriableNotADataError() {
        SchemaRegistryClient down = new SchemaRegistryClient() {
            @Override
            public int register(String subject, Schema schema) {
                throw SchemaRegistryException.noResponse("connection refused", null);
            }

            @Override
            public Schema getById(int id) {
                throw SchemaRegistryException.fromResponse(503, 50003, "backend unavailable");
            }
        };
        byte[] bytes = serde.serializer().serialize(TOPIC, notification());
        SpecificAvroDeserializer<Notification> d = new SpecificAvroDeserializer<>(down, Notification.class);
        assertThatThrownBy(() -> d.deserialize(TOPIC, bytes))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> {
                    assertThat(e.retriable()).isTrue();
                    assertThat(e.errorCode()).isEqualTo(50003);
                });
        assertThatThrownBy(() -> new SpecificAvroSerializer<Notification>(down).serialize(TOPIC, notification()))
                .isInstanceOfSatisfying(SchemaRegistryException.class, e -> assertThat(e.retriable()).isTrue());
        assertThat(SchemaRegistryException.fromResponse(404, 40403, "x").retriable()).isFalse();
        assertThat(SchemaRegistryException.fromResponse(422, 42201, "x").retriable()).isFalse();
    }

    @Test
    void configuredByClassNameReadsTypeAndUrl() {
        SpecificAvroDeserializer<Notification> d = new SpecificAvroDeserializer<>();
        assertThatThrownBy(() -> d.configure(Map.of("schema.registry.url", "http://127.0.0.1:1"), false))
                .isInstanceOf(ConfigException.class).hasMessageContaining("sluice.avro.type");
        assertThatThrownBy(() -> new SpecificAvroDeserializer<Notification>().configure(
                Map.of("schema.registry.url", "http://127.0.0.1:1", "sluice.avro.type", "no.such.Type"), false))
                .isInstanceOf(ConfigException.class).hasMessageContaining("no.such.Type");
        assertThatThrownBy(() -> new SpecificAvroSerde<Notification>().configure(
                Map.of("sluice.avro.type", Notification.class.getName()), false))
                .isInstanceOf(ConfigException.class).hasMessageContaining("schema.registry.url");
        assertThatThrownBy(() -> new SpecificAvroSerde<Notification>().configure(
                Map.of("schema.registry.url", "not a url", "sluice.avro.type", Notification.class.getName()), false))
                .isInstanceOf(ConfigException.class).hasMessageContaining("not a url");

        assertThatThrownBy(() -> new CachedSchemaRegistryClient("ftp://user:pw123@registry:8081"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("schema.registry.url").hasMessageNotContaining("pw123");

        SpecificAvroSerde<Notification> byName = new SpecificAvroSerde<>();
        byName.configure(Map.of("schema.registry.url", "http://127.0.0.1:1", "sluice.avro.type", Notification.class.getName()), false);
        assertThat(((SpecificAvroDeserializer<Notification>) byName.deserializer()).readerSchema())
                .isEqualTo(Notification.getClassSchema());
    }

    @Test
    void nullableUnionShortcutWritesTheBytesAvroWrites() throws Exception {
        // Unions with null first, null second, and a three-branch union (Avro's own resolution), each null and not null.
        Schema schema = new Schema.Parser().parse("""
                {"type": "record", "name": "U", "fields": [
                  {"name": "a", "type": ["null", "string"]},
                  {"name": "b", "type": ["long", "null"]},
                  {"name": "c", "type": ["null", "string", "long"]},
                  {"name": "d", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}]}]}""");
        for (Object[] values : List.of(new Object[] {null, null, null, null}, new Object[] {"x", 7L, "y", 1_753_833_600_000L},
                new Object[] {"", 0L, 42L, null})) {
            GenericData.Record r = new GenericData.Record(schema);
            for (int i = 0; i < values.length; i++) {
                r.put(i, values[i]);
            }
            assertThat(encode(new SpecificAvroSerializer.NullableUnionWriter<>(schema, new org.apache.avro.specific.SpecificData()), r))
                    .as("values %s", Arrays.toString(values))
                    .isEqualTo(encode(new GenericDatumWriter<>(schema), r));
        }
        // Sluice's records, optional fields set and not set: the bytes Avro's SpecificDatumWriter writes.
        Notification bare = Notification.newBuilder(notification()).setExpiresAt(null).setAttributes(Map.of()).setBotPool(List.of()).build();
        for (Notification n : List.of(notification(), bare)) {
            byte[] ours = serde.serializer().serialize(TOPIC, n);
            byte[] avro = encode(new org.apache.avro.specific.SpecificDatumWriter<>(Notification.getClassSchema(),
                    org.apache.avro.specific.SpecificData.getForClass(Notification.class)), n);
            assertThat(Arrays.copyOfRange(ours, WireFormat.HEADER_LENGTH, ours.length)).isEqualTo(avro);
        }
    }

    @Test
    void theBufferKeptPerThreadWritesEachRecordExactlyAndStaysBounded() throws Exception {
        // Issue 21: one output buffer per thread, reused. A large record then small ones on the same thread: each is exactly
        // the wire format of Avro's own bytes (nothing left over from the record before), and a buffer grown past the bound
        // by the large record is not kept. Two threads writing at once get their own records' bytes.
        Notification small = notification();
        Notification large = Notification.newBuilder(small).setText("x".repeat(200_000)).build();
        org.apache.avro.specific.SpecificDatumWriter<Notification> avroWriter = new org.apache.avro.specific.SpecificDatumWriter<>(
                Notification.getClassSchema(), org.apache.avro.specific.SpecificData.getForClass(Notification.class));
        byte[] smallAvro = encode(avroWriter, small);
        byte[] largeAvro = encode(avroWriter, large);
        var serializer = serde.serializer();
        for (Notification n : List.of(small, large, small, small)) {
            byte[] ours = serializer.serialize(TOPIC, n);
            assertThat(ours[0]).isEqualTo(WireFormat.MAGIC_BYTE);
            assertThat(java.nio.ByteBuffer.wrap(ours, 1, 4).getInt()).isEqualTo(registry.register(TOPIC + "-value", Notification.getClassSchema()));
            assertThat(Arrays.copyOfRange(ours, WireFormat.HEADER_LENGTH, ours.length)).isEqualTo(n == small ? smallAvro : largeAvro);
            assertThat(serde.deserializer().deserialize(TOPIC, ours)).isEqualTo(n);
            assertThat(SpecificAvroSerializer.ReusableOutput.OF_THREAD.get().keptBytes())
                    .isLessThanOrEqualTo(SpecificAvroSerializer.ReusableOutput.KEPT_MAX_BYTES);
        }
        java.util.concurrent.ExecutorService two = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            List<java.util.concurrent.Future<Boolean>> done = new java.util.ArrayList<>();
            for (Notification n : List.of(small, large)) {
                byte[] expected = n == small ? smallAvro : largeAvro;
                done.add(two.submit(() -> {
                    for (int i = 0; i < 200; i++) {
                        byte[] ours = serializer.serialize(TOPIC, n);
                        if (!Arrays.equals(Arrays.copyOfRange(ours, WireFormat.HEADER_LENGTH, ours.length), expected)) {
                            return false;
                        }
                    }
                    return true;
                }));
            }
            for (var f : done) {
                assertThat(f.get(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            }
        } finally {
            two.shutdownNow();
        }
    }

    @Test
    void theIdKeptPerTopicFollowsTheSchemaTheSubjectAndTheTopic() {
        // One serializer for two record types and two topics: each record carries the id of its own schema under its topic's
        // subject, however the writes alternate; a reconfigure to keys switches the subject.
        SpecificAvroSerializer<org.apache.avro.specific.SpecificRecord> s = new SpecificAvroSerializer<>(registry);
        dev.sluice.avro.MessagePart part = dev.sluice.avro.MessagePart.newBuilder().setIndex(1).setCount(2).setParentId("n-1").build();
        int notificationId = registry.register("a-value", Notification.getClassSchema());
        for (int round = 0; round < 2; round++) {
            assertThat(idOf(s.serialize("a", notification()))).isEqualTo(notificationId);
            assertThat(idOf(s.serialize("a", part))).isEqualTo(registry.lookup("a-value", dev.sluice.avro.MessagePart.getClassSchema()));
            assertThat(idOf(s.serialize("b", part))).isEqualTo(registry.lookup("b-value", dev.sluice.avro.MessagePart.getClassSchema()));
        }
        assertThat(registry.subjects()).containsExactlyInAnyOrder("a-value", "b-value");
        s.configure(Map.of(), true);
        s.serialize("a", notification());
        assertThat(registry.subjects()).contains("a-key");
        SpecificAvroSerializer<Notification> lookupOnly = new SpecificAvroSerializer<>(registry, false, false);
        assertThat(idOf(lookupOnly.serialize("a", notification()))).isEqualTo(notificationId);
        assertThatThrownBy(() -> lookupOnly.serialize("c", notification())).isInstanceOf(SchemaRegistryException.class);
        assertThatThrownBy(() -> lookupOnly.serialize("c", notification())).as("a failed lookup is not kept")
                .isInstanceOf(SchemaRegistryException.class);
        registry.register("c-value", Notification.getClassSchema());
        assertThat(idOf(lookupOnly.serialize("c", notification()))).isEqualTo(notificationId);
    }

    private static int idOf(byte[] wire) {
        return ByteBuffer.wrap(wire, 1, 4).getInt();
    }

    private static <D> byte[] encode(org.apache.avro.io.DatumWriter<D> writer, D datum) throws java.io.IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BinaryEncoder enc = EncoderFactory.get().directBinaryEncoder(out, null);
        writer.write(datum, enc);
        enc.flush();
        return out.toByteArray();
    }

    static byte[] wire(int id, Schema schema, GenericRecord record) {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.write(0);
            out.write(ByteBuffer.allocate(4).putInt(id).array());
            BinaryEncoder enc = EncoderFactory.get().binaryEncoder(out, null);
            new GenericDatumWriter<GenericRecord>(schema).write(record, enc);
            enc.flush();
            return out.toByteArray();
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }
}
