package dev.sluice.topology;

import static dev.sluice.topology.Harness.notification;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.ChatEventType;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Lane;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/** Issue 5 behaviour on the TopologyTestDriver: classes, chat status, deadlines, schedules, digests, pressure, policy. */
class RoutingTest extends HarnessTest {
    private static final Instant TEN = Instant.parse("2026-03-02T10:00:00Z");

    private Harness start(Map<String, String> extra) {
        h = new Harness(stateDir, TEN, extra);
        return h;
    }

    private void pressureOn() {
        h.senderStatus("alerts", "sender-1", 100_000, 30.0); // 3,333 s to drain, threshold 30 s
    }

    private List<String> resultIds(List<DeliveryResult> results) {
        return results.stream().map(DeliveryResult::getMessageId).toList();
    }

    @Test
    void classifiesByTheEventsOwnClassThenTheFirstMatchingKindPatternThenRoutine() {
        start(Map.of("classify.kind.patterns", "meeting.cancelled=CRITICAL,meeting.*=COLLAPSIBLE,*.code=CRITICAL"));
        h.send(notification("c-1", "42", TEN).setKind("meeting.cancelled").build());
        h.send(notification("m-1", "42", TEN).setKind("meeting.moved").build());
        h.send(notification("s-1", "42", TEN).setKind("security.login.code").build());
        h.send(notification("t-1", "43", TEN).setKind("task.assigned").build());
        h.send(notification("o-1", "44", TEN).setKind("meeting.moved").setEventClass(NotificationClass.ROUTINE).build());

        List<OutboundMessage> out = h.drainLive();
        assertThat(out).extracting(OutboundMessage::getId).containsExactly("c-1", "s-1", "t-1", "o-1");
        assertThat(out).extracting(OutboundMessage::getEventClass).containsExactly(
                NotificationClass.CRITICAL, NotificationClass.CRITICAL, NotificationClass.ROUTINE, NotificationClass.ROUTINE);
        h.advance(Duration.ofSeconds(60));
        OutboundMessage digest = h.outboxLive.readValue();
        assertThat(digest.getEventClass()).as("meeting.moved matched meeting.*").isEqualTo(NotificationClass.COLLAPSIBLE);
        assertThat(digest.getFoldedIds()).containsExactly("m-1");
        assertThat(h.outboxLive.isEmpty()).isTrue();
    }

    @Test
    void threeRoutineEventsAt10AreFlushedAsOneDigestAfter60sOfWallClockAlthoughStreamTimeNeverMoves() {
        start(Map.of());
        pressureOn();
        for (String id : List.of("a", "b", "c")) {
            h.send(notification(id, "42", TEN).build()); // every record timestamp is 10:00:00.000
        }
        assertThat(h.outboxLive.isEmpty()).isTrue();
        h.advance(Duration.ofSeconds(59), Duration.ofSeconds(1));
        assertThat(h.outboxLive.isEmpty()).as("not before 60 s").isTrue();
        h.advance(Duration.ofSeconds(1));

        List<TestRecord<String, OutboundMessage>> out = h.outboxLive.readRecordsToList();
        assertThat(out).hasSize(1);
        OutboundMessage d = out.get(0).value();
        assertThat(out.get(0).key()).isEqualTo("42");
        assertThat(d.getDigestCount()).isEqualTo(3);
        assertThat(d.getFoldedIds()).containsExactly("a", "b", "c");
        assertThat(d.getId()).as("partition, offset of the opening record, folded_at (F4)")
                .isEqualTo("live-digest-0-0-" + TEN.toEpochMilli());
        assertThat(d.getText()).startsWith("3 updates to task.updated task-42 (").endsWith("Latest:\nTask 42: state c");
        assertThat(d.getDueAt()).isEqualTo(TEN.plusSeconds(60));
        assertThat(d.getCreatedAt()).isEqualTo(TEN);
        h.advance(Duration.ofMinutes(5), Duration.ofSeconds(30));
        assertThat(h.outboxLive.isEmpty()).as("exactly one digest").isTrue();
        assertThat(h.counts.get("live.folded.PRESSURE")).isEqualTo(1);
        assertThat(h.counts.get("live.folded.PENDING_KEY")).isEqualTo(2);
        assertThat(h.counts.get("live.digests")).isEqualTo(1);
        assertThat(h.counts.get("live.digests.interval")).as("the punctuator sent it").isEqualTo(1);
    }

    @Test
    void twoEventsOfOneKeyInTheSameMillisecondGiveOneDigestWithBoth() {
        start(Map.of());
        pressureOn();
        h.send(notification("x-1", "42", TEN.plusMillis(7)).build());
        h.send(notification("x-2", "42", TEN.plusMillis(7)).build());
        h.advance(Duration.ofSeconds(60));
        List<OutboundMessage> out = h.drainLive();
        assertThat(out).hasSize(1);
        assertThat(out.get(0).getDigestCount()).isEqualTo(2);
        assertThat(out.get(0).getFoldedIds()).containsExactly("x-1", "x-2");
    }

    /**
     * The demo's order violations (session 17): a chat's first routine notification folded under pressure, the pressure
     * ended, and the chat's next notification (another quake: another digest key) was sent on at once, reaching the
     * chat a flush interval before the digest holding the first. Per-chat order: a routine notification to a chat with
     * any pending entry of its bot folds too, into its own entry, and the chat's entries leave in fold order.
     */
    @Test
    void aPendingEntryHoldsEveryLaterRoutineNotificationOfItsChatSoPerChatOrderHolds() {
        start(Map.of("pressure.status.max.age.ms", "5000"));
        pressureOn();
        h.send(notification("k-1", "42", TEN).build()); // folds: pressure
        h.advance(Duration.ofSeconds(10)); // the report is now stale: no pressure
        h.send(notification("k-2", "42", TEN).build()); // same key: folds behind k-1
        h.send(notification("o-1", "42", TEN).setEntity("task-7").build()); // another key of that chat: folds, behind k-1
        h.send(notification("p-1", "43", TEN).build()); // a chat with nothing pending: goes on
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("p-1");
        h.advance(Duration.ofSeconds(50));
        h.send(notification("k-3", "42", TEN).build()); // after the flush: itself, behind the digests

        List<OutboundMessage> out = h.drainLive();
        assertThat(out).extracting(OutboundMessage::getFoldedIds)
                .containsExactly(List.of("k-1", "k-2"), List.of("o-1"), List.of());
        assertThat(out.get(1).getText()).as("a digest of one is its text").isEqualTo("Task 42: state o-1");
        assertThat(out.get(2).getId()).isEqualTo("k-3");
        assertThat(h.counts.get("live.folded.PENDING_KEY")).isEqualTo(1);
        assertThat(h.counts.get("live.folded.PENDING_CHAT")).isEqualTo(1);
    }

    /**
     * Entries folded in one millisecond leave in the order of their latest folds, not in key order (task-7 sorts first);
     * a digest shows its latest notification, so k-2 joining k-1's entry sends that digest after o-1 (review, session 17:
     * in opening order the chat would have read k-2's text before o-1).
     */
    @Test
    void entriesOfOneChatLeaveInTheOrderOfTheirLatestFolds() {
        start(Map.of());
        pressureOn();
        h.send(notification("k-1", "42", TEN).build());
        h.send(notification("o-1", "42", TEN).setEntity("task-7").build());
        h.send(notification("k-2", "42", TEN).build());
        h.advance(Duration.ofSeconds(60));
        assertThat(h.drainLive()).extracting(OutboundMessage::getFoldedIds)
                .containsExactly(List.of("o-1"), List.of("k-1", "k-2"));
    }

    /** Per-chat order is per bot: another bot's conversation with the same user does not wait for these digests. */
    @Test
    void anotherBotsNotificationToTheSameChatIsNotHeldBehindItsDigests() {
        start(Map.of());
        pressureOn(); // the alerts bot only
        h.send(notification("k-1", "42", TEN).build());
        h.send(notification("n-1", "42", TEN).setBotId("news").setEntity("task-7").build());
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("n-1");
        assertThat(h.counts.get("live.folded.PENDING_CHAT")).isZero();
    }

    /** A full entry leaves at once, and the entries of its chat that leave before it go first. */
    @Test
    void aFullEntryTakesTheEntriesOfItsChatThatLeaveBeforeItAlong() {
        start(Map.of("digest.max.folded.ids", "2"));
        pressureOn();
        h.send(notification("k-1", "42", TEN).build());
        h.send(notification("o-1", "42", TEN).setEntity("task-7").build());
        h.send(notification("q-1", "43", TEN).build()); // another chat's entry stays pending
        h.send(notification("o-2", "42", TEN).setEntity("task-7").build()); // full
        assertThat(h.drainLive()).extracting(OutboundMessage::getFoldedIds)
                .containsExactly(List.of("k-1"), List.of("o-1", "o-2"));
        h.advance(Duration.ofSeconds(60));
        assertThat(h.drainLive()).extracting(OutboundMessage::getFoldedIds).containsExactly(List.of("q-1"));
    }

    @Test
    void aFullEntryLeavesAtOnceAsItsOwnDigestAndMaxKeysFlushesAll() {
        start(Map.of("digest.max.folded.ids", "3", "digest.max.keys", "3"));
        pressureOn();
        for (int i = 1; i <= 7; i++) {
            h.send(notification("f-" + i, "42", TEN).build());
        }
        List<OutboundMessage> full = h.drainLive();
        assertThat(full).extracting(OutboundMessage::getFoldedIds).containsExactly(List.of("f-1", "f-2", "f-3"), List.of("f-4", "f-5", "f-6"));
        h.send(notification("g-1", "43", TEN).build());
        assertThat(h.outboxLive.isEmpty()).isTrue();
        h.send(notification("g-2", "44", TEN).build()); // third pending key: flush all now
        List<OutboundMessage> flushed = h.drainLive();
        assertThat(flushed).extracting(OutboundMessage::getFoldedIds)
                .containsExactly(List.of("f-7"), List.of("g-1"), List.of("g-2"));
        assertThat(flushed.get(0).getText()).as("a digest of one is its text").isEqualTo("Task 42: state f-7");
        assertThat(h.counts.get("live.digests.max_folded_ids")).isEqualTo(2);
        assertThat(h.counts.get("live.digests.max_keys")).isEqualTo(3);
        assertThat(h.counts.get("live.digests.interval")).isZero();
    }

    @Test
    void aBlockedChatEndsAsSkippedInactiveUntilTheUserWritesAgain() {
        start(Map.of());
        h.chatEvent("42", ChatEventType.BLOCKED, null);
        h.send(notification("n-1", "42", TEN).build());
        h.send(notification("n-2", "43", TEN).build());
        List<DeliveryResult> results = h.resultsOut.readValuesToList();
        assertThat(results).hasSize(1);
        DeliveryResult r = results.get(0);
        assertThat(r.getMessageId()).isEqualTo("n-1");
        assertThat(r.getStatus()).isEqualTo(DeliveryStatus.SKIPPED_INACTIVE);
        assertThat(r.getSenderInstance()).isEqualTo("topology");
        assertThat(r.getReason()).isEqualTo("chat 42 is inactive since " + TEN + " (chat.events BLOCKED)");
        assertThat(r.getAttempts()).isZero();
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("n-2");

        h.advance(Duration.ofSeconds(1));
        h.chatEvent("42", ChatEventType.ACTIVE, null);
        h.send(notification("n-3", "42", TEN).build());
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("n-3");

        // The sender's BLOCKED result makes it inactive as well; a DELIVERED result later makes it active.
        h.advance(Duration.ofSeconds(1));
        h.results.pipeInput("42", DeliveryResult.newBuilder().setMessageId("n-3").setBotId("alerts").setChatId("42")
                .setStatus(DeliveryStatus.BLOCKED).setReason("Forbidden: bot was blocked by the user").setResultAt(h.now()).build());
        h.resultsOut.readValuesToList(); // our own input echoed
        h.send(notification("n-4", "42", TEN).build());
        assertThat(h.resultsOut.readValuesToList()).singleElement().satisfies(x -> {
            assertThat(x.getStatus()).isEqualTo(DeliveryStatus.SKIPPED_INACTIVE);
            assertThat(x.getReason()).contains("delivery.results BLOCKED: Forbidden: bot was blocked by the user");
        });
        // An older fact does not override a newer one.
        h.chatEvents.pipeInput("42", dev.sluice.avro.ChatEvent.newBuilder().setBotId("alerts").setChatId("42")
                .setType(ChatEventType.ACTIVE).setAt(h.now().minusSeconds(60)).build());
        h.send(notification("n-5", "42", TEN).build());
        assertThat(resultIds(h.resultsOut.readValuesToList())).containsExactly("n-5");
        assertThat(h.counts.get("live.result.SKIPPED_INACTIVE")).isEqualTo(3);
    }

    @Test
    void aDigestWhoseChatBecameInactiveWhilePendingEndsAsOneSkippedInactiveResultWithItsFoldedIds() {
        start(Map.of());
        pressureOn();
        h.send(notification("a", "42", TEN).build());
        h.send(notification("b", "42", TEN).build());
        h.chatEvent("42", ChatEventType.BLOCKED, null);
        h.advance(Duration.ofSeconds(60));
        assertThat(h.outboxLive.isEmpty()).isTrue();
        DeliveryResult r = h.resultsOut.readValue();
        assertThat(r.getMessageId()).matches("live-digest-0-\\d+-\\d+");
        assertThat(r.getStatus()).isEqualTo(DeliveryStatus.SKIPPED_INACTIVE);
        assertThat(r.getDigestCount()).isEqualTo(2);
        assertThat(r.getFoldedIds()).containsExactly("a", "b");
        assertThat(r.getReason()).contains("became inactive").contains("chat.events BLOCKED");
        assertThat(h.resultsOut.isEmpty()).isTrue();
    }

    @Test
    void aPastDeadlineEndsAsExpired() {
        start(Map.of());
        h.advance(Duration.ofMinutes(1));
        h.send(notification("late", "42", TEN).setEventClass(NotificationClass.CRITICAL).setExpiresAt(TEN.plusSeconds(30)).build());
        h.send(notification("ok", "42", TEN).setEventClass(NotificationClass.CRITICAL).setExpiresAt(TEN.plusSeconds(90)).build());
        DeliveryResult r = h.resultsOut.readValue();
        assertThat(r.getMessageId()).isEqualTo("late");
        assertThat(r.getStatus()).isEqualTo(DeliveryStatus.EXPIRED);
        assertThat(r.getEventClass()).isEqualTo(NotificationClass.CRITICAL);
        assertThat(r.getSenderInstance()).isEqualTo("topology");
        assertThat(r.getReason()).isEqualTo("expires_at 2026-03-02T10:00:30Z passed before the topology could release it (at 2026-03-02T10:01:00Z)");
        assertThat(h.resultsOut.isEmpty()).isTrue();
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("ok");
    }

    @Test
    void aMigratedChatIsReAddressed() {
        start(Map.of());
        h.chatEvent("-4001", ChatEventType.MIGRATED, "-1004001");
        h.send(notification("n-1", "-4001", TEN).build());
        TestRecord<String, OutboundMessage> r = h.outboxLive.readRecord();
        assertThat(r.key()).isEqualTo("-1004001");
        assertThat(r.value().getChatId()).isEqualTo("-1004001");
        assertThat(r.value().getAttributes()).containsEntry("sluice.migrated_from_chat_id", "-4001");
    }

    /**
     * The migration a sender learns from a 400 {@code migrate_to_chat_id}. The sender on main writes the result
     * with {@code chat_id} = the NEW id, keyed by it, {@code migrated_to_chat_id} = the new id (F11): that record
     * says nothing about the old id and must not loop. The fixed sender keys the result by the OLD id with
     * {@code chat_id} = old and {@code migrated_to_chat_id} = new (the contract in docs/chat-events.md): from that
     * the topology re-addresses later notifications to the old id.
     */
    @Test
    void aMigrationLearnedFromAResultKeyedByTheOldIdReAddressesLaterNotifications() {
        start(Map.of());
        DeliveryResult.Builder delivered = DeliveryResult.newBuilder().setMessageId("m-0").setBotId("alerts")
                .setStatus(DeliveryStatus.DELIVERED).setEventClass(NotificationClass.ROUTINE).setLane(Lane.LIVE)
                .setProviderMessageId(7L).setAttempts(2).setDueAt(h.now()).setSentAt(h.now()).setResultAt(h.now())
                .setSenderInstance("sender-1");
        // As the sender on main writes it: keyed and chat_id'd by the new id.
        h.result(delivered.setChatId("-1005001").setMigratedToChatId("-1005001").build());
        h.send(notification("n-1", "-5001", TEN).build());
        h.send(notification("n-2", "-1005001", TEN).build());
        assertThat(h.outboxLive.readRecordsToList()).extracting(TestRecord::key).containsExactly("-5001", "-1005001");

        // As the fixed sender writes it: keyed and chat_id'd by the old id.
        h.result(delivered.setMessageId("m-1").setChatId("-5001").setMigratedToChatId("-1005001").build());
        h.send(notification("n-3", "-5001", TEN).build());
        TestRecord<String, OutboundMessage> moved = h.outboxLive.readRecord();
        assertThat(moved.key()).isEqualTo("-1005001");
        assertThat(moved.value().getChatId()).isEqualTo("-1005001");
        assertThat(moved.value().getAttributes()).containsEntry("sluice.migrated_from_chat_id", "-5001");
        // Per bot: another bot has not learned it (its own sender will, with one 400).
        h.send(notification("n-4", "-5001", TEN).setBotId("news").build());
        assertThat(h.outboxLive.readRecord().key()).isEqualTo("-5001");
    }

    @Test
    void aUserWhoOptedOutGetsRoutineOneByOneButCollapsibleStillFolds() {
        start(Map.of());
        pressureOn();
        h.optOut("u-1", true);
        for (int i = 1; i <= 3; i++) {
            h.send(notification("r-" + i, "42", TEN).setUserId("u-1").build());
        }
        h.send(notification("c-1", "42", TEN).setUserId("u-1").setKind("board.updated").setEventClass(NotificationClass.COLLAPSIBLE).build());
        h.send(notification("r-other", "43", TEN).build()); // another user under pressure: folds
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("r-1", "r-2", "r-3");
        h.advance(Duration.ofSeconds(60));
        assertThat(h.drainLive()).extracting(OutboundMessage::getFoldedIds).containsExactlyInAnyOrder(List.of("c-1"), List.of("r-other"));
    }

    @Test
    void aPreferenceChangedAtRuntimeIsSeenByTheNextNotification() {
        // Issue 21 session 10: users without a preference are answered from memory (PreferenceKeys); that memory is loaded
        // by the first lookup, so the opt-out below comes after it and must still be seen, and so must the opt-in after.
        start(Map.of());
        pressureOn();
        h.send(notification("r-1", "42", TEN).setUserId("u-2").setEntity("task-1").build()); // no preference: folds
        h.optOut("u-2", true);
        // (another chat of the user: in chat 42 it would fold behind r-1 whatever the preference, per-chat order)
        h.send(notification("r-2", "44", TEN).setUserId("u-2").setEntity("task-2").build()); // one by one
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("r-2");
        h.optOut("u-2", false);
        h.send(notification("r-3", "44", TEN).setUserId("u-2").setEntity("task-3").build()); // folds again
        assertThat(h.outboxLive.isEmpty()).isTrue();
        h.advance(Duration.ofSeconds(60));
        assertThat(h.drainLive()).extracting(OutboundMessage::getFoldedIds).containsExactlyInAnyOrder(List.of("r-1"), List.of("r-3"));
    }

    @Test
    void theChatPolicyFoldsWhatExceedsItsGcraAndPerChatOverridesApply() {
        start(Map.of("policy.chat.rate", "2/h", "policy.chat.burst", "2", "policy.chat.overrides", "43=none"));
        for (int i = 1; i <= 4; i++) {
            h.send(notification("p-" + i, "42", TEN).setEntity("task-" + i).build()); // distinct keys: only the policy folds
            h.send(notification("q-" + i, "43", TEN).setEntity("task-" + i).build());
        }
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("p-1", "q-1", "p-2", "q-2", "q-3", "q-4");
        // A digest to this chat is one more message under its policy: it waits until the GCRA allows it.
        // 2/h with burst 2: after two at 10:00 the next is allowed at 10:30, the one after at 11:00.
        h.advance(Duration.ofMinutes(29), Duration.ofMinutes(1));
        assertThat(h.outboxLive.isEmpty()).isTrue();
        h.advance(Duration.ofMinutes(1));
        assertThat(h.drainLive()).extracting(OutboundMessage::getFoldedIds).containsExactly(List.of("p-3"));
        h.advance(Duration.ofMinutes(30), Duration.ofMinutes(1));
        assertThat(h.drainLive()).extracting(OutboundMessage::getFoldedIds).containsExactly(List.of("p-4"));
        assertThat(h.counts.get("live.folded.POLICY")).isEqualTo(1);
        assertThat(h.counts.get("live.folded.PENDING_CHAT")).as("p-4 behind p-3's pending digest").isEqualTo(1);
        // Idle chats leave the policy store (their TAT is as good as never seen); 43 never had one (none).
        assertThat(h.driver.<String, String>getKeyValueStore("chat-policy-store").get("42")).isNotNull();
        h.advance(Duration.ofHours(2), Duration.ofMinutes(1));
        try (var all = h.driver.<String, String>getKeyValueStore("chat-policy-store").all()) {
            assertThat(all.hasNext()).isFalse();
        }
    }

    @Test
    void aScheduledPostLeavesNotBeforeItsTimeAndWithinOneSecondAfter() {
        start(Map.of());
        Instant due = TEN.plus(Duration.ofHours(1));
        h.send(notification("post-1", "@channel", TEN).setKind("channel.post").setNotBefore(due).build());
        h.send(notification("now-1", "@channel", TEN).setKind("channel.post").build());
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("now-1");
        h.advance(Duration.ofMinutes(59), Duration.ofMinutes(1));
        h.advanceTo(due.minusMillis(1), Duration.ofMillis(250));
        assertThat(h.outboxLive.isEmpty()).as("not before not_before").isTrue();
        h.advance(Duration.ofSeconds(1), Duration.ofMillis(50));
        List<OutboundMessage> out = h.drainLive();
        assertThat(out).extracting(OutboundMessage::getId).containsExactly("post-1");
        assertThat(out.get(0).getDueAt()).isBetween(due, due.plusSeconds(1));
        h.advance(Duration.ofMinutes(10), Duration.ofSeconds(10));
        assertThat(h.outboxLive.isEmpty()).as("released once").isTrue();
        assertThat(h.counts.get("live.scheduled")).isEqualTo(1);
        assertThat(h.counts.get("live.released")).isEqualTo(1);
    }

    @Test
    void theBackfillLaneRunsTheSameLogicIntoTheBackfillOutbox() {
        start(Map.of());
        pressureOn();
        h.chatEvent("44", ChatEventType.BLOCKED, null);
        h.sendBackfill(notification("b-1", "42", TEN).build());
        h.sendBackfill(notification("b-2", "42", TEN).build());
        h.sendBackfill(notification("b-crit", "42", TEN).setEventClass(NotificationClass.CRITICAL).build());
        h.sendBackfill(notification("b-sched", "43", TEN).setEventClass(NotificationClass.CRITICAL).setNotBefore(TEN.plusSeconds(5)).build());
        h.sendBackfill(notification("b-blocked", "44", TEN).build());
        assertThat(h.outboxBackfill.readValuesToList()).extracting(OutboundMessage::getId).containsExactly("b-crit");
        DeliveryResult skipped = h.resultsOut.readValue();
        assertThat(skipped.getMessageId()).isEqualTo("b-blocked");
        assertThat(skipped.getLane()).isEqualTo(Lane.BACKFILL);
        h.advance(Duration.ofSeconds(60), Duration.ofSeconds(1));
        List<OutboundMessage> out = h.outboxBackfill.readValuesToList();
        assertThat(out).extracting(OutboundMessage::getId).containsExactly("b-sched", "backfill-digest-0-0-" + TEN.toEpochMilli());
        assertThat(out).extracting(OutboundMessage::getLane).containsOnly(Lane.BACKFILL);
        assertThat(out.get(1).getFoldedIds()).containsExactly("b-1", "b-2");
        assertThat(h.outboxLive.isEmpty()).isTrue();
    }

    @Test
    void eachBadRecordLandsInTheDlqWithAReasonNamingTheProblemAndTheNextValidRecordGoesThrough() {
        start(Map.of());
        byte[] notAvro = Harness.utf8("{\"id\":\"x\"}");
        byte[] unknownId = java.nio.ByteBuffer.allocate(9).put((byte) 0).putInt(4242).putInt(0).array();
        byte[] noChat = h.avro(notification("no-chat", null, TEN).build());
        byte[] tooLong = h.avro(notification("too-long", "42", TEN).setText("y".repeat(4097)).build());
        Map<byte[], String> expected = new java.util.LinkedHashMap<>();
        expected.put(notAvro, "not Confluent wire format: magic byte 0x7b");
        expected.put(unknownId, "unknown schema id 4242");
        expected.put(noChat, "field chat_id is missing (null)");
        expected.put(tooLong, "field text has 4097 characters, more than the 4096 allowed");
        int i = 0;
        for (Map.Entry<byte[], String> bad : expected.entrySet()) {
            h.live.pipeInput(Harness.utf8("k"), bad.getKey());
            var dead = h.dlq.readRecord();
            assertThat(dead.value()).isEqualTo(bad.getKey());
            assertThat(new String(dead.headers().lastHeader(DeadLetterHeaders.REASON).value(), java.nio.charset.StandardCharsets.UTF_8))
                    .contains(bad.getValue());
            h.send(notification("ok-" + i, "42", TEN).build());
            assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("ok-" + i);
            i++;
        }
        assertThat(h.dlq.isEmpty()).isTrue();
    }

    @Test
    void globPatterns() {
        assertThat(KindPatternClassifier.globToRegex("meeting.*").matcher("meeting.moved.again").matches()).isTrue();
        assertThat(KindPatternClassifier.globToRegex("meeting.*").matcher("meetingXmoved").matches()).isFalse();
        assertThat(KindPatternClassifier.globToRegex("*.code").matcher("login.code").matches()).isTrue();
        assertThat(KindPatternClassifier.globToRegex("a*b*c").matcher("a-x-b-y-c").matches()).isTrue();
        assertThat(KindPatternClassifier.globToRegex("exact").matcher("exact").matches()).isTrue();
        assertThat(KindPatternClassifier.globToRegex("exact").matcher("exact.more").matches()).isFalse();
    }

    static List<String> ids(List<Notification> ns) {
        List<String> out = new ArrayList<>();
        ns.forEach(n -> out.add(n.getId()));
        return out;
    }
}
