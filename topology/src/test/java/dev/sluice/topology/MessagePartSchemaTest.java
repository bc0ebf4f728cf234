package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Lane;
import dev.sluice.avro.MessagePart;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.schemas.InMemorySchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroDeserializer;
import dev.sluice.schemas.SpecificAvroSerializer;
import dev.sluice.schemas.WireFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.junit.jupiter.api.Test;

/**
 * The optional {@code part} field (a {@link MessagePart}, default null) on OutboundMessage and DeliveryResult is a
 * compatible evolution: records written with the previous schemas (files in {@code src/test/resources/previous-schema},
 * from git, commit fc8f8f1) by an old topology or an old sender are read by the new code with {@code part} null, and an
 * old reader (a sender not yet upgraded) reads the new records, ignoring the field.
 */
class MessagePartSchemaTest {
    private static final Instant TEN = Instant.parse("2026-03-02T10:00:00Z");
    private final InMemorySchemaRegistryClient registry = new InMemorySchemaRegistryClient();

    private static Schema previous(String name) throws IOException {
        Schema.Parser parser = new Schema.Parser();
        parser.parse(Notification.getClassSchema().toString()); // NotificationClass, InlineKeyboard, Media, EditPart
        parser.parse(Lane.getClassSchema().toString());
        parser.parse(DeliveryStatus.getClassSchema().toString());
        try (InputStream in = MessagePartSchemaTest.class.getResourceAsStream("/previous-schema/" + name + ".avsc")) {
            return parser.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    /** Confluent wire format: magic byte, the schema id, the Avro binary of {@code record} written with {@code schema}. */
    private static byte[] wire(int id, Schema schema, GenericRecord record) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        bytes.write(WireFormat.MAGIC_BYTE);
        bytes.write(ByteBuffer.allocate(4).putInt(id).array());
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(bytes, null);
        new GenericDatumWriter<GenericRecord>(schema).write(record, encoder);
        encoder.flush();
        return bytes.toByteArray();
    }

    private static GenericData.EnumSymbol symbol(Schema schema, String field, String value) {
        Schema s = schema.getField(field).schema();
        if (s.getType() == Schema.Type.UNION) {
            s = s.getTypes().get(1);
        }
        return new GenericData.EnumSymbol(s, value);
    }

    @Test
    void theNewSchemasCanReadThePreviousOnesAndTheOtherWayRound() throws IOException {
        for (var pair : List.of(Map.entry(previous("OutboundMessage"), OutboundMessage.getClassSchema()),
                Map.entry(previous("DeliveryResult"), DeliveryResult.getClassSchema()))) {
            assertThat(pair.getKey().getField("part")).as("really the old schema").isNull();
            assertThat(SchemaCompatibility.checkReaderWriterCompatibility(pair.getValue(), pair.getKey()).getType())
                    .isEqualTo(SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE);
            assertThat(SchemaCompatibility.checkReaderWriterCompatibility(pair.getKey(), pair.getValue()).getType())
                    .isEqualTo(SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE);
        }
    }

    @Test
    void anOutboundMessageOfAnOldTopologyIsReadWithoutAPart() throws IOException {
        Schema old = previous("OutboundMessage");
        int id = registry.register("outbox.live-value", old);
        GenericRecord m = new GenericData.Record(old);
        m.put("id", "n-1");
        m.put("bot_id", "alerts");
        m.put("chat_id", "42");
        m.put("kind", "task.updated");
        m.put("event_class", symbol(old, "event_class", "CRITICAL"));
        m.put("lane", symbol(old, "lane", "LIVE"));
        m.put("text", "hello");
        m.put("created_at", TEN.toEpochMilli());
        m.put("due_at", TEN.toEpochMilli());
        m.put("digest_count", 0);
        m.put("folded_ids", List.of());
        m.put("bot_pool", List.of());
        m.put("attributes", Map.of());
        m.put("disable_notification", false);
        m.put("protect_content", false);
        m.put("link_preview_disabled", false);

        OutboundMessage read = new SpecificAvroDeserializer<>(registry, OutboundMessage.class).deserialize("outbox.live", wire(id, old, m));
        assertThat(read.getId()).isEqualTo("n-1");
        assertThat(read.getText()).isEqualTo("hello");
        assertThat(read.getPart()).isNull();
        assertThat(Outbound.parts(read)).as("an old message is never split again").containsExactly(read);
    }

    @Test
    void aDeliveryResultOfAnOldSenderIsReadWithoutAPartAndPassesThePartsStepUnchanged() throws IOException {
        Schema old = previous("DeliveryResult");
        int id = registry.register("delivery.results-value", old);
        GenericRecord r = new GenericData.Record(old);
        r.put("message_id", "n-2");
        r.put("bot_id", "alerts");
        r.put("chat_id", "42");
        r.put("status", symbol(old, "status", "DELIVERED"));
        r.put("lane", symbol(old, "lane", "LIVE"));
        r.put("provider_message_id", 77L);
        r.put("attempts", 1);
        r.put("result_at", TEN.toEpochMilli());
        r.put("digest_count", 0);
        r.put("folded_ids", List.of());

        DeliveryResult read = new SpecificAvroDeserializer<>(registry, DeliveryResult.class).deserialize("delivery.results",
                wire(id, old, r));
        assertThat(read.getMessageId()).isEqualTo("n-2");
        assertThat(read.getProviderMessageId()).isEqualTo(77L);
        assertThat(read.getPart()).isNull();
    }

    @Test
    void anOldReaderReadsANewPartIgnoringTheField() throws IOException {
        OutboundMessage part = OutboundMessage.newBuilder().setId("n-3#2/3").setBotId("alerts").setChatId("42").setKind("k")
                .setEventClass(NotificationClass.ROUTINE).setText("second part").setCreatedAt(TEN).setDueAt(TEN)
                .setPart(MessagePart.newBuilder().setIndex(2).setCount(3).setParentId("n-3").build()).build();
        byte[] wire = new SpecificAvroSerializer<OutboundMessage>(registry).serialize("outbox.live", part);
        byte[] body = Arrays.copyOfRange(wire, WireFormat.HEADER_LENGTH, wire.length);
        Schema old = previous("OutboundMessage");
        GenericRecord read = new GenericDatumReader<GenericRecord>(OutboundMessage.getClassSchema(), old)
                .read(null, DecoderFactory.get().binaryDecoder(body, null));
        assertThat(read.get("id").toString()).isEqualTo("n-3#2/3");
        assertThat(read.get("text").toString()).isEqualTo("second part");
        assertThat(read.getSchema().getField("part")).isNull();
    }
}
