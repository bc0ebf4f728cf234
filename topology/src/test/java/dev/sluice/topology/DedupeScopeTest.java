package dev.sluice.topology;

import static dev.sluice.topology.Harness.notification;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.ChatEventType;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * The dedupe's scope (found by an outside trial): a repeated id is dropped only for the same chat. The test driver runs
 * every chat in one task (partition 0), which is the case the previous version got wrong: two chats that hash to the
 * same partition shared one set of ids, so the second chat's notification was dropped without a result.
 */
class DedupeScopeTest extends HarnessTest {
    private static final Instant TEN = Instant.parse("2026-03-02T10:00:00Z");

    @Test
    void theSameIdForTwoChatsOfOneTaskIsRoutedToEachAndARepeatForTheSameChatIsDropped() {
        h = new Harness(stateDir, TEN, Map.of());
        h.send(notification("same-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).build());
        h.send(notification("same-1", "43", TEN).setEventClass(NotificationClass.CRITICAL).build());
        h.send(notification("same-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).build()); // a retry
        h.advance(Duration.ofHours(23));
        h.send(notification("same-1", "43", TEN).setEventClass(NotificationClass.CRITICAL).build()); // within the window
        assertThat(h.drainLive()).extracting(OutboundMessage::getId, OutboundMessage::getChatId)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("same-1", "42"),
                        org.assertj.core.groups.Tuple.tuple("same-1", "43"));
        assertThat(h.counts.get("live.duplicates")).isEqualTo(2);
    }

    @Test
    void theSameIdForTwoChatsGetsOneResultEach() {
        h = new Harness(stateDir, TEN, Map.of());
        h.advance(Duration.ofMinutes(1));
        h.send(notification("late-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).setExpiresAt(TEN.plusSeconds(30)).build());
        h.send(notification("late-1", "43", TEN).setEventClass(NotificationClass.CRITICAL).setExpiresAt(TEN.plusSeconds(30)).build());
        h.send(notification("late-1", "43", TEN).setEventClass(NotificationClass.CRITICAL).setExpiresAt(TEN.plusSeconds(30)).build());
        assertThat(h.resultsOut.readValuesToList()).extracting(DeliveryResult::getChatId, DeliveryResult::getStatus)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("42", DeliveryStatus.EXPIRED),
                        org.assertj.core.groups.Tuple.tuple("43", DeliveryStatus.EXPIRED));
        assertThat(h.counts.get("live.duplicates")).isEqualTo(1);
    }

    @Test
    void theSameIdScheduledForTwoChatsAtTheSameInstantIsReleasedToEach() {
        h = new Harness(stateDir, TEN, Map.of());
        Instant due = TEN.plusSeconds(60);
        h.send(notification("sched-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).setNotBefore(due).build());
        h.send(notification("sched-1", "43", TEN).setEventClass(NotificationClass.CRITICAL).setNotBefore(due).build());
        h.advance(Duration.ofSeconds(62), Duration.ofMillis(500));
        assertThat(h.drainLive()).extracting(OutboundMessage::getChatId).containsExactlyInAnyOrder("42", "43");
        assertThat(h.counts.get("live.released")).isEqualTo(2);
    }

    @Test
    void theKeyIsTheChatBeforeMigrationSoARepeatOfAMigratedChatIsStillDropped() {
        h = new Harness(stateDir, TEN, Map.of());
        h.chatEvent("alerts", "-4001", ChatEventType.MIGRATED, "-1004001");
        h.send(notification("mig-1", "-4001", TEN).setEventClass(NotificationClass.CRITICAL).build());
        h.send(notification("mig-1", "-4001", TEN).setEventClass(NotificationClass.CRITICAL).build());
        TestRecord<String, OutboundMessage> r = h.outboxLive.readRecord();
        assertThat(r.value().getChatId()).isEqualTo("-1004001");
        assertThat(h.outboxLive.isEmpty()).isTrue();
        assertThat(h.counts.get("live.duplicates")).isEqualTo(1);
    }

    @Test
    void digestsOpenedByRecordsOfTheDirectPathAndTheRepartitionAtOneOffsetHaveTwoIds() {
        // A digest id is unique per partition, offset and instant; a chat-keyed record (direct path, offset 0 of
        // notifications) and a repartitioned one (offset 0 of the by-chat repartition) share the partition and offset.
        // One id for two chats' digests would make the sender take the second for a reuse of the first's id.
        h = new Harness(stateDir, TEN, Map.of());
        h.sendKeyed(notification("col-1", "42", TEN).setEventClass(NotificationClass.COLLAPSIBLE).build(), "42");
        h.send(notification("col-2", "43", TEN).setEventClass(NotificationClass.COLLAPSIBLE).build());
        h.advance(Duration.ofSeconds(61), Duration.ofSeconds(1));
        java.util.List<OutboundMessage> digests = h.drainLive();
        assertThat(digests).extracting(OutboundMessage::getChatId).containsExactlyInAnyOrder("42", "43");
        assertThat(digests).allSatisfy(d -> assertThat(d.getDigestCount()).isEqualTo(1));
        assertThat(digests).extracting(OutboundMessage::getId).doesNotHaveDuplicates();
    }
}
