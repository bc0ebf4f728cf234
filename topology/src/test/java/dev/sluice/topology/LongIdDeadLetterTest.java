package dev.sluice.topology;

import static dev.sluice.topology.Harness.notification;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * A notification whose id is far over the 256-byte bound, on the TopologyTestDriver: what the topology really writes.
 * It is dead-lettered (original bytes kept) and ends with exactly one FAILED result keyed by its chat; the reason text
 * (result and dead-letter header) echoes only the start of the id and its length, never the whole id.
 */
class LongIdDeadLetterTest extends HarnessTest {
    private static final Instant TEN = Instant.parse("2026-03-02T10:00:00Z");
    /** A reason that echoed a whole id of these sizes would be thousands of characters long. */
    private static final int MAX_REASON_CHARS = 300;

    private static String reasonHeader(TestRecord<byte[], byte[]> dlq) {
        return new String(dlq.headers().lastHeader(DeadLetterHeaders.REASON).value(), StandardCharsets.UTF_8);
    }

    @Test
    void aFiveThousandCharacterIdEndsAsOneFailedResultWhoseReasonEchoesOnlyItsStart() {
        h = new Harness(stateDir, TEN, Map.of());
        String id = "i".repeat(5_000);
        h.send(notification(id, "42", TEN).build());
        h.send(notification("ok", "42", TEN).build());

        List<TestRecord<byte[], byte[]>> dlq = h.dlq.readRecordsToList();
        assertThat(dlq).hasSize(1);
        assertThat(reasonHeader(dlq.get(0))).startsWith("field id has 5000 bytes, more than 256 (UTF-8): 'iii")
                .endsWith("\u2026 (5000 characters)'").hasSizeLessThan(MAX_REASON_CHARS);

        List<TestRecord<String, DeliveryResult>> results = h.resultsOut.readRecordsToList();
        assertThat(results).hasSize(1);
        TestRecord<String, DeliveryResult> r = results.get(0);
        assertThat(r.key()).isEqualTo("42");
        assertThat(r.value().getStatus()).isEqualTo(DeliveryStatus.FAILED);
        // message_id is the notification's id: the key its producer correlates the result with
        assertThat(r.value().getMessageId()).isEqualTo(id);
        assertThat(r.value().getReason()).startsWith("dead-lettered to notifications.dlq: field id has 5000 bytes")
                .hasSizeLessThan(MAX_REASON_CHARS).doesNotContain("i".repeat(100));
        assertThat(h.drainLive()).extracting(m -> m.getId()).containsExactly("ok");
    }

    @Test
    void anIdOverTheResultBoundStillEndsAsExactlyOneFailedResultWithABoundedMessageId() {
        h = new Harness(stateDir, TEN, Map.of());
        int idChars = ValidateProcessor.MAX_RESULT_ID_BYTES + 4_464; // 70,000: too long to carry whole in a result
        h.send(notification("j".repeat(idChars), "42", TEN).build());

        assertThat(h.dlq.readRecordsToList()).hasSize(1);
        List<TestRecord<String, DeliveryResult>> results = h.resultsOut.readRecordsToList();
        assertThat(results).as("every notification ends as exactly one result").hasSize(1);
        DeliveryResult r = results.get(0).value();
        assertThat(results.get(0).key()).isEqualTo("42");
        assertThat(r.getStatus()).isEqualTo(DeliveryStatus.FAILED);
        assertThat(r.getMessageId()).isEqualTo("j".repeat(64) + "\u2026 (" + idChars + " characters)");
        assertThat(r.getReason()).hasSizeLessThan(MAX_REASON_CHARS).contains("(" + idChars + " characters)")
                .contains("message_id is the id's first 64 characters");
    }
}
