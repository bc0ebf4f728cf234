package dev.sluice.app.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.sender.SenderService;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.topology.TopologyService;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 16 "done when": one id produced twice, and a repeated id inside a digest window (F4's repro), through the
 * real topology, a sender and FakeTelegram: every id ends with exactly one result. Before the fix the second
 * digest took the id {@code live-digest-dup-1} of the delivered one, the sender's DONE mark skipped it, and
 * y-1 and z-1 never got a result.
 */
class DuplicatesEndToEndIT {
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456789");

    @Test
    void everyIdEndsWithExactlyOneResultWhenIdsRepeat(@TempDir Path dir) throws Exception {
        try (EndToEndHarness e2e = EndToEndHarness.start("dup-it", dir)) {
            List<DeliveryResult> results = e2e.results();
            try (TopologyService topology = e2e.topology(Map.of("classify.kind.patterns", "board.*=COLLAPSIBLE",
                         "digest.flush.interval.ms", "1000"));
                 SenderService sender = EndToEndHarness.sender(e2e.senderSettings().with("sender.instance.id", "sender-1")
                         .with("bot.alerts.token", TOKEN))) {
                topology.start();
                sender.start();

                // Round 1: dup-1 folds into a digest and is delivered; n-1 is written twice (a producer retry).
                e2e.produce(line("dup-1", "42", "board.updated", null),
                        line("n-1", "43", "meeting.reminder", "CRITICAL"), line("n-1", "43", "meeting.reminder", "CRITICAL"));
                e2e.awaitSettled(Set.of("dup-1", "n-1"), DuplicatesEndToEndIT::settles);
                // Round 2, within one flush interval: dup-1 again (a replay), then y-1 and z-1 of the same digest key.
                e2e.produce(line("dup-1", "42", "board.updated", null),
                        line("y-1", "42", "board.updated", null), line("z-1", "42", "board.updated", null));
                e2e.awaitSettled(Set.of("dup-1", "n-1", "y-1", "z-1"), DuplicatesEndToEndIT::settles);
                // Anything more (a second result for an id) would arrive within the next flushes.
                e2e.readFor(Duration.ofSeconds(3));
            }
            for (String id : List.of("dup-1", "n-1", "y-1", "z-1")) {
                assertThat(results.stream().filter(r -> settles(r).contains(id))).as("results for " + id + ": " + results)
                        .singleElement().extracting(DeliveryResult::getStatus).isEqualTo(DeliveryStatus.DELIVERED);
            }
            assertThat(results).extracting(DeliveryResult::getMessageId).doesNotHaveDuplicates();
            assertThat(e2e.telegram.accepted()).as("n-1, the first digest, the digest of y-1 and z-1").hasSize(3);
        }
    }

    private static List<String> settles(DeliveryResult r) {
        return r.getFoldedIds().isEmpty() ? List.of(r.getMessageId()) : r.getFoldedIds();
    }

    /** A `sluice produce` line; {@code eventClass} null: classified by kind pattern (board.* is COLLAPSIBLE). */
    private static String line(String id, String chat, String kind, String eventClass) {
        return "{\"id\":\"" + id + "\",\"bot_id\":\"alerts\",\"chat_id\":\"" + chat + "\",\"kind\":\"" + kind + "\",\"entity\":\"E\","
                + (eventClass == null ? "" : "\"event_class\":\"" + eventClass + "\",") + "\"text\":\"" + kind + " " + id + "\"}";
    }
}
