package dev.sluice.topology;

import static dev.sluice.topology.Harness.notification;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Lane;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Folded notifications keep their deadlines (found from outside: five COLLAPSIBLE notifications with {@code expires_at}
 * 5 s ahead were folded and their digest delivered 51 s past it, DELIVERED): at a flush, entries past their
 * {@code expires_at} leave the digest as EXPIRED results of their own; the digest carries the earliest deadline of what
 * it still holds; an entry whose earliest deadline comes before the next regular flush leaves early. A single-step
 * {@link Harness#advance} stands for a stream thread that could not run in between (a stall, a restart).
 */
class DigestDeadlineTest extends HarnessTest {
    private static final Instant TEN = Instant.parse("2026-03-02T10:00:00Z");

    private Harness start(Map<String, String> extra) {
        h = new Harness(stateDir, TEN, extra);
        return h;
    }

    private static dev.sluice.avro.Notification.Builder collapsible(String id, Instant expiresAt) {
        return notification(id, "42", TEN).setEventClass(NotificationClass.COLLAPSIBLE).setExpiresAt(expiresAt);
    }

    private static void assertTopologyExpired(DeliveryResult r, String id, Instant deadline) {
        assertThat(r.getMessageId()).isEqualTo(id);
        assertThat(r.getStatus()).isEqualTo(DeliveryStatus.EXPIRED);
        assertThat(r.getSenderInstance()).isEqualTo("topology");
        assertThat(r.getReason()).contains("expires_at " + deadline);
        assertThat(r.getDigestCount()).isZero();
        assertThat(r.getFoldedIds()).isEmpty();
        assertThat(r.getChatId()).isEqualTo("42");
        assertThat(r.getBotId()).isEqualTo("alerts");
        assertThat(r.getLane()).isEqualTo(Lane.LIVE);
        assertThat(r.getAttempts()).isZero();
    }

    @Test
    void anEntryPastItsDeadlineAtTheFlushEndsExpiredAndLeavesTheDigest() {
        start(Map.of());
        h.send(collapsible("c-0", TEN.plusSeconds(5)).build());
        h.send(collapsible("c-1", null).build());
        h.send(collapsible("c-2", TEN.plusSeconds(120)).build());
        h.advance(Duration.ofSeconds(60)); // one step: the thread did not run before the flush

        List<DeliveryResult> results = h.resultsOut.readValuesToList();
        assertThat(results).hasSize(1);
        assertTopologyExpired(results.get(0), "c-0", TEN.plusSeconds(5));
        List<OutboundMessage> out = h.drainLive();
        assertThat(out).hasSize(1);
        OutboundMessage d = out.get(0);
        assertThat(d.getFoldedIds()).containsExactly("c-1", "c-2");
        assertThat(d.getDigestCount()).isEqualTo(2);
        assertThat(d.getText()).startsWith("2 updates to task.updated task-42 (").endsWith("Latest:\nTask 42: state c-2")
                .doesNotContain("c-0");
        assertThat(d.getExpiresAt()).as("the earliest deadline it still holds").isEqualTo(TEN.plusSeconds(120));
        assertThat(h.counts.get("live.result.EXPIRED")).isEqualTo(1);
        assertThat(h.counts.get("live.digest.folded")).as("what the digest settles").isEqualTo(2);
    }

    @Test
    void aDigestCarriesTheEarliestDeadlineOfItsEntries() {
        start(Map.of());
        h.send(collapsible("c-0", TEN.plusSeconds(300)).build());
        h.send(collapsible("c-1", TEN.plusSeconds(200)).build());
        h.send(collapsible("c-2", null).build());
        h.advance(Duration.ofSeconds(60), Duration.ofMillis(250));

        List<OutboundMessage> out = h.drainLive();
        assertThat(out).hasSize(1);
        assertThat(out.get(0).getFoldedIds()).containsExactly("c-0", "c-1", "c-2");
        assertThat(out.get(0).getDueAt()).as("the regular flush").isEqualTo(TEN.plusSeconds(60));
        assertThat(out.get(0).getExpiresAt()).isEqualTo(TEN.plusSeconds(200));
        assertThat(h.resultsOut.isEmpty()).isTrue();
    }

    /** The outside trial's case, on a stalled thread: nothing is left to send, every id ends EXPIRED on its own. */
    @Test
    void aFoldWhoseEntriesAllExpiredSendsNoDigestOnlyExpiredResults() {
        start(Map.of());
        for (int i = 0; i < 5; i++) {
            h.send(collapsible("cx5-" + i, TEN.plusSeconds(5)).build());
        }
        h.advance(Duration.ofSeconds(60));

        assertThat(h.drainLive()).as("no digest").isEmpty();
        List<DeliveryResult> results = h.resultsOut.readValuesToList();
        assertThat(results).extracting(DeliveryResult::getMessageId).containsExactly("cx5-0", "cx5-1", "cx5-2", "cx5-3", "cx5-4");
        for (DeliveryResult r : results) {
            assertTopologyExpired(r, r.getMessageId(), TEN.plusSeconds(5));
        }
        h.advance(Duration.ofMinutes(3), Duration.ofSeconds(1));
        assertThat(h.drainLive()).isEmpty();
        assertThat(h.resultsOut.isEmpty()).as("exactly one result each").isTrue();
        assertThat(h.counts.get("live.digests")).isZero();
    }

    /** ROUTINE notifications folded under pressure take the same path. */
    @Test
    void routineFoldedUnderPressureExpiresTheSameWay() {
        start(Map.of());
        h.senderStatus("alerts", "sender-1", 100_000, 30.0); // 3,333 s to drain, threshold 30 s
        h.send(notification("r-0", "42", TEN).setExpiresAt(TEN.plusSeconds(5)).build());
        h.send(notification("r-1", "42", TEN).setExpiresAt(TEN.plusSeconds(5)).build());
        h.send(notification("r-2", "42", TEN).setEntity("task-7").setExpiresAt(TEN.plusSeconds(90)).build()); // PENDING_CHAT
        assertThat(h.drainLive()).as("all folded").isEmpty();
        assertThat(h.counts.get("live.folded.PRESSURE")).isEqualTo(1);
        h.advance(Duration.ofSeconds(60));

        List<DeliveryResult> results = h.resultsOut.readValuesToList();
        assertThat(results).extracting(DeliveryResult::getMessageId).containsExactly("r-0", "r-1");
        for (DeliveryResult r : results) {
            assertTopologyExpired(r, r.getMessageId(), TEN.plusSeconds(5));
            assertThat(r.getEventClass()).isEqualTo(NotificationClass.ROUTINE);
        }
        List<OutboundMessage> out = h.drainLive();
        assertThat(out).extracting(OutboundMessage::getFoldedIds).containsExactly(List.of("r-2"));
        assertThat(out.get(0).getExpiresAt()).isEqualTo(TEN.plusSeconds(90));
    }

    /**
     * A digest shows its latest notification (text, keyboard, media): once that one is past its deadline the entries it
     * superseded expire with it, each with its own result naming the deadline that ended it.
     */
    @Test
    void whenTheLatestEntryExpiredTheEntriesItSupersededExpireWithIt() {
        start(Map.of());
        h.send(collapsible("k-1", null).build());
        h.send(collapsible("k-2", TEN.plusSeconds(5)).build());
        h.advance(Duration.ofSeconds(60));

        assertThat(h.drainLive()).isEmpty();
        List<DeliveryResult> results = h.resultsOut.readValuesToList();
        assertThat(results).extracting(DeliveryResult::getMessageId).containsExactly("k-1", "k-2");
        for (DeliveryResult r : results) {
            assertTopologyExpired(r, r.getMessageId(), TEN.plusSeconds(5));
        }
        assertThat(results.get(0).getReason()).contains("k-2");
    }

    /**
     * A deadline shorter than the flush interval is not simply expired: the entry leaves {@code digest.deadline.lead.ms}
     * (default 1 s) before it, on the deadline check (every {@code schedule.release.interval.ms}, 250 ms), with everything
     * it folded so far and the deadline on the digest.
     */
    @Test
    void anEntryWhoseDeadlineComesBeforeTheNextFlushLeavesEarly() {
        start(Map.of());
        for (int i = 0; i < 5; i++) {
            h.send(collapsible("cx5-" + i, TEN.plusSeconds(5)).build());
        }
        h.advance(Duration.ofSeconds(3), Duration.ofMillis(250));
        assertThat(h.drainLive()).as("still folding").isEmpty();
        h.advance(Duration.ofSeconds(57), Duration.ofMillis(250));

        List<OutboundMessage> out = h.drainLive();
        assertThat(out).hasSize(1);
        OutboundMessage d = out.get(0);
        assertThat(d.getFoldedIds()).containsExactly("cx5-0", "cx5-1", "cx5-2", "cx5-3", "cx5-4");
        assertThat(d.getExpiresAt()).isEqualTo(TEN.plusSeconds(5));
        assertThat(d.getDueAt()).isBetween(TEN.plusSeconds(3), TEN.plusSeconds(4));
        assertThat(h.resultsOut.isEmpty()).isTrue();
        assertThat(h.counts.get("live.digests")).isEqualTo(1);
    }
    /**
     * Leaving early keeps per-chat order: the chat's entries that leave before the due one (folded earlier) go first,
     * as when an entry is full.
     */
    @Test
    void anEntryLeavingEarlyTakesAlongTheEntriesOfItsChatFoldedBeforeIt() {
        start(Map.of());
        h.send(collapsible("k-1", null).build());
        h.send(collapsible("o-1", TEN.plusSeconds(5)).setEntity("task-7").build());
        h.send(collapsible("x-1", null).setChatId("43").build()); // another chat: waits for the flush
        h.advance(Duration.ofSeconds(5), Duration.ofMillis(250));

        assertThat(h.drainLive()).extracting(OutboundMessage::getFoldedIds).containsExactly(List.of("k-1"), List.of("o-1"));
        assertThat(h.counts.get("live.digests.deadline")).isEqualTo(2);
        h.advance(Duration.ofSeconds(55), Duration.ofSeconds(1));
        assertThat(h.drainLive()).extracting(OutboundMessage::getFoldedIds).containsExactly(List.of("x-1"));
        assertThat(h.resultsOut.isEmpty()).isTrue();
    }

    /**
     * An entry its chat's policy holds past the flushes is not sent late: its ids end EXPIRED at their deadline (the
     * deadline check runs once the deadline comes before the next flush), and no digest follows when the policy allows.
     */
    @Test
    void anEntryThePolicyHoldsEndsExpiredAtItsDeadlineNotLater() {
        start(Map.of("policy.chat.rate", "2/h", "policy.chat.burst", "2"));
        h.send(notification("p-1", "42", TEN).setEntity("task-1").build());
        h.send(notification("p-2", "42", TEN).setEntity("task-2").build());
        h.send(notification("p-3", "42", TEN).setEntity("task-3").setExpiresAt(TEN.plus(Duration.ofMinutes(10))).build());
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("p-1", "p-2");
        assertThat(h.counts.get("live.folded.POLICY")).isEqualTo(1);
        h.advance(Duration.ofMinutes(15), Duration.ofMillis(250));

        List<DeliveryResult> results = h.resultsOut.readValuesToList();
        assertThat(results).hasSize(1);
        assertTopologyExpired(results.get(0), "p-3", TEN.plus(Duration.ofMinutes(10)));
        assertThat(results.get(0).getResultAt()).isBetween(TEN.plus(Duration.ofMinutes(10)),
                TEN.plus(Duration.ofMinutes(10)).plusMillis(250));
        h.advance(Duration.ofMinutes(60), Duration.ofMinutes(1)); // the GCRA allows one at 10:30 and 11:00
        assertThat(h.drainLive()).as("nothing left to send").isEmpty();
        assertThat(h.resultsOut.isEmpty()).isTrue();
    }
}
