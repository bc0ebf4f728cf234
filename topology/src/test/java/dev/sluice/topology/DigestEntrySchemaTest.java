package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DigestEntry;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.schemas.InMemorySchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroDeserializer;
import dev.sluice.schemas.WireFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumWriter;
import org.junit.jupiter.api.Test;

/**
 * Session 17 added {@code fold_seq} (default 0) to DigestEntry, the value of {@code <lane>-digest-store} and its
 * changelog. A topology of this version restoring a changelog an older one wrote (the schema in
 * {@code src/test/resources/previous-schema/DigestEntry.avsc}, from git, commit dfc56e3) reads those entries with
 * {@code fold_seq} 0: they leave first ({@link PendingDigests#LEAVING_ORDER}), which is where they belong, having been
 * folded before any entry of the new version.
 */
class DigestEntrySchemaTest {
    private static final Instant TEN = Instant.parse("2026-03-02T10:00:00Z");

    private static Schema previous() throws IOException {
        Schema.Parser parser = new Schema.Parser();
        parser.parse(Notification.getClassSchema().toString()); // Notification and the types it names
        try (InputStream in = DigestEntrySchemaTest.class.getResourceAsStream("/previous-schema/DigestEntry.avsc")) {
            return parser.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    @Test
    void theNewSchemaReadsThePreviousOneAndTheOtherWayRound() throws IOException {
        Schema old = previous();
        assertThat(old.getField("fold_seq")).as("really the old schema").isNull();
        assertThat(SchemaCompatibility.checkReaderWriterCompatibility(DigestEntry.getClassSchema(), old).getType())
                .isEqualTo(SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE);
        assertThat(SchemaCompatibility.checkReaderWriterCompatibility(old, DigestEntry.getClassSchema()).getType())
                .isEqualTo(SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE);
    }

    @Test
    void anEntryAnOlderTopologyLeftInTheChangelogIsRestoredWithFoldSeqZero() throws IOException {
        Schema old = previous();
        InMemorySchemaRegistryClient registry = new InMemorySchemaRegistryClient();
        int id = registry.register("sluice-topology-live-digest-store-changelog-value", old);
        Notification n = Harness.notification("k-1", "42", TEN).setEventClass(NotificationClass.ROUTINE).build();
        DigestEntry entry = DigestEntry.newBuilder().setBotId("alerts").setChatId("42").setKind("task.updated")
                .setEntity("task-42").setEventClass(NotificationClass.ROUTINE).setCount(1).setFirstAt(TEN).setLastAt(TEN)
                .setFoldedAt(TEN).setLatest(n).setFoldedIds(List.of("k-1")).setDigestId("live-digest-0-7-1").build();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        bytes.write(WireFormat.MAGIC_BYTE);
        bytes.write(ByteBuffer.allocate(4).putInt(id).array());
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(bytes, null);
        new SpecificDatumWriter<DigestEntry>(old).write(entry, encoder); // as the old topology wrote it
        encoder.flush();

        DigestEntry read = new SpecificAvroDeserializer<>(registry, DigestEntry.class)
                .deserialize("sluice-topology-live-digest-store-changelog", bytes.toByteArray());
        assertThat(read.getFoldSeq()).isZero();
        assertThat(read.getFolded()).as("no per-id deadlines: only the latest's is known").isEmpty();
        assertThat(Outbound.folded(read)).extracting(m -> m.getExpiresAt()).containsExactly((Instant) null);
        assertThat(read.getFoldedIds()).containsExactly("k-1");
        assertThat(read.getDigestId()).isEqualTo("live-digest-0-7-1");
        assertThat(read.getLatest().getText()).isEqualTo(n.getText());
    }
}
