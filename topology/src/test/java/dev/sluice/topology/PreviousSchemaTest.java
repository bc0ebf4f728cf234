package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.schemas.WireFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * Issue 20: a record written with the previous Notification schema (before reply_markup, media, edits: the file in
 * {@code src/test/resources/previous-schema} is that schema from git, commit 139dc5f) by an old producer (registered under
 * its own id, Confluent wire format) is read by the new topology and reaches the outbox with the new fields at their defaults.
 */
class PreviousSchemaTest extends HarnessTest {
    private static final Instant TEN = Instant.parse("2026-03-02T10:00:00Z");

    @Test
    void aRecordWrittenWithThePreviousSchemaIsReadAndSentOnWithTheNewFieldsAtTheirDefaults() throws IOException {
        Schema previous;
        try (InputStream in = getClass().getResourceAsStream("/previous-schema/Notification.avsc")) {
            Schema.Parser parser = new Schema.Parser();
            parser.parse(NotificationClass.getClassSchema().toString()); // the old file names it, as the build's imports do
            previous = parser.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
        assertThat(previous.getField("reply_markup")).as("really the old schema").isNull();
        h = new Harness(stateDir, TEN, Map.of());
        int id = h.registry.register("notifications-value", previous);

        GenericRecord old = new GenericData.Record(previous);
        old.put("id", "old-1");
        old.put("bot_id", "alerts");
        old.put("chat_id", "42");
        old.put("kind", "meeting.reminder");
        old.put("event_class", new GenericData.EnumSymbol(previous.getField("event_class").schema().getTypes().get(1), "CRITICAL"));
        old.put("text", "Meeting at 10:00");
        old.put("parse_mode", "HTML");
        old.put("created_at", TEN.toEpochMilli());
        old.put("bot_pool", List.of());
        old.put("attributes", Map.of("room", "4.01"));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        bytes.write(WireFormat.MAGIC_BYTE);
        bytes.write(ByteBuffer.allocate(4).putInt(id).array());
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(bytes, null);
        new GenericDatumWriter<GenericRecord>(previous).write(old, encoder);
        encoder.flush();

        h.live.pipeInput(new TestRecord<>("producer".getBytes(StandardCharsets.UTF_8), bytes.toByteArray(), TEN));

        assertThat(h.dlq.isEmpty()).isTrue();
        List<OutboundMessage> out = h.drainLive();
        assertThat(out).singleElement().satisfies(m -> {
            assertThat(m.getId()).isEqualTo("old-1");
            assertThat(m.getText()).isEqualTo("Meeting at 10:00");
            assertThat(m.getParseMode()).isEqualTo("HTML");
            assertThat(m.getAttributes()).containsEntry("room", "4.01");
            assertThat(m.getReplyMarkup()).isNull();
            assertThat(m.getMedia()).isNull();
            assertThat(m.getDisableNotification()).isFalse();
            assertThat(m.getMessageThreadId()).isNull();
            assertThat(m.getEditOf()).isNull();
            assertThat(m.getDeleteOf()).isNull();
        });
    }
}
