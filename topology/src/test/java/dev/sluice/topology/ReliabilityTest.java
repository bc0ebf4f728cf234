package dev.sluice.topology;

import static dev.sluice.topology.Harness.notification;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.ChatEventType;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Lane;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * Issue 16, topology side, on the TopologyTestDriver: duplicates, dead letters with results, bounded waits,
 * field size bounds, chat id normalisation and per-(bot, chat) status. Records are what the processes write:
 * notifications as {@code sluice produce} writes them, chat.events as {@code sluice chat-event} writes them,
 * results with the fields the sender's {@code DeliveryProcessor.finish} sets.
 */
class ReliabilityTest extends HarnessTest {
    private static final Instant TEN = Instant.parse("2026-03-02T10:00:00Z");

    private Harness start(Map<String, String> extra) {
        h = new Harness(stateDir, TEN, extra);
        return h;
    }

    /** A result as the sender's DeliveryProcessor.finish writes it for a provider answer (no migration). */
    private DeliveryResult senderResult(String id, String bot, String chat, DeliveryStatus status, String reason, Integer errorCode) {
        return DeliveryResult.newBuilder().setMessageId(id).setBotId(bot).setChatId(chat).setStatus(status)
                .setEventClass(NotificationClass.ROUTINE).setLane(Lane.LIVE).setReason(reason).setErrorCode(errorCode)
                .setProviderMessageId(status == DeliveryStatus.DELIVERED ? 7L : null).setAttempts(1).setDueAt(h.now())
                .setSentAt(h.now()).setResultAt(h.now()).setDigestCount(0).setFoldedIds(List.of()).setSenderInstance("sender-1").build();
    }

    private static String reason(TestRecord<byte[], byte[]> dlq) {
        return new String(dlq.headers().lastHeader(DeadLetterHeaders.REASON).value(), StandardCharsets.UTF_8);
    }

    // ---- 1. duplicates -------------------------------------------------------------------------------

    @Test
    void oneIdProducedTwiceEndsWithOneOutboundMessageAndNoSecondResult() {
        start(Map.of());
        h.send(notification("n-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).build());
        h.send(notification("n-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).build()); // a producer retry
        h.send(notification("n-2", "42", TEN).setEventClass(NotificationClass.CRITICAL).build());
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("n-1", "n-2");
        assertThat(h.resultsOut.isEmpty()).isTrue();
        assertThat(h.counts.get("live.duplicates")).isEqualTo(1);
    }

    @Test
    void aRepeatedIdInsideADigestWindowIsDroppedAndTheNewDigestDoesNotCollideWithTheDeliveredOne() {
        // F4's repro: dup-1 is folded and flushed; then dup-1 again, y-1 and z-1 within one flush interval.
        start(Map.of("classify.kind.patterns", "board.*=COLLAPSIBLE"));
        h.send(notification("dup-1", "42", TEN).setKind("board.updated").setEntity("E").build());
        h.advance(Duration.ofSeconds(60));
        OutboundMessage first = h.outboxLive.readValue();
        assertThat(first.getFoldedIds()).containsExactly("dup-1");
        for (String id : List.of("dup-1", "y-1", "z-1")) {
            h.send(notification(id, "42", TEN).setKind("board.updated").setEntity("E").build());
        }
        h.advance(Duration.ofSeconds(60));
        OutboundMessage second = h.outboxLive.readValue();
        assertThat(second.getFoldedIds()).containsExactly("y-1", "z-1");
        assertThat(second.getId()).isNotEqualTo(first.getId());
        assertThat(h.outboxLive.isEmpty()).isTrue();
        assertThat(h.resultsOut.isEmpty()).isTrue();
        assertThat(h.counts.get("live.duplicates")).isEqualTo(1);
    }

    @Test
    void digestIdsStayUniqueWhenTheSameIdComesBackAfterTheDedupeWindow() {
        start(Map.of("classify.kind.patterns", "board.*=COLLAPSIBLE", "dedupe.window.ms", "60000"));
        List<String> digestIds = new ArrayList<>();
        for (int round = 0; round < 3; round++) {
            h.send(notification("again", "42", TEN).setKind("board.updated").setEntity("E").build());
            h.advance(Duration.ofSeconds(61));
            OutboundMessage d = h.outboxLive.readValue();
            assertThat(d.getFoldedIds()).containsExactly("again");
            digestIds.add(d.getId());
        }
        assertThat(digestIds).doesNotHaveDuplicates().allMatch(id -> id.startsWith("live-digest-"));
        assertThat(h.counts.get("live.duplicates")).as("outside the window it is a new notification").isZero();
    }

    @Test
    void aDuplicateOfAScheduledNotificationIsCaughtWhileItWaits() {
        start(Map.of());
        h.send(notification("s-1", "42", TEN).setNotBefore(TEN.plusSeconds(30)).build());
        h.send(notification("s-1", "42", TEN).setNotBefore(TEN.plusSeconds(30)).build());
        h.advance(Duration.ofSeconds(31), Duration.ofMillis(250));
        h.send(notification("s-1", "42", TEN).build());
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("s-1");
        assertThat(h.resultsOut.isEmpty()).isTrue();
        assertThat(h.counts.get("live.duplicates")).isEqualTo(2);
    }

    // ---- 4. dead letters have results ----------------------------------------------------------------

    @Test
    void aDeadLetteredNotificationWithAReadableIdEndsWithAFailedResultCarryingTheReason() {
        start(Map.of());
        h.send(notification("long", " 42 ", TEN).setText("x".repeat(4097)).build());
        h.send(notification("no-chat", "42", TEN).setChatId(null).build());
        h.live.pipeInput(new TestRecord<>(Harness.utf8("k"), Harness.utf8("not avro"), TEN));

        List<TestRecord<byte[], byte[]>> dlq = h.dlq.readRecordsToList();
        assertThat(dlq).hasSize(3);
        List<TestRecord<String, DeliveryResult>> results = h.resultsOut.readRecordsToList();
        assertThat(results).extracting(r -> r.value().getMessageId()).containsExactly("long", "no-chat");
        DeliveryResult r = results.get(0).value();
        assertThat(results.get(0).key()).isEqualTo("42");
        assertThat(r.getChatId()).isEqualTo("42");
        assertThat(r.getBotId()).isEqualTo("alerts");
        assertThat(r.getStatus()).isEqualTo(DeliveryStatus.FAILED);
        assertThat(r.getSenderInstance()).isEqualTo("topology");
        assertThat(r.getAttempts()).isZero();
        assertThat(r.getReason()).startsWith("dead-lettered to notifications.dlq: ").contains("text has 4097 characters");
        assertThat(r.getReason()).isEqualTo("dead-lettered to notifications.dlq: " + reason(dlq.get(0)));
        assertThat(results.get(1).value().getChatId()).as("no chat id to name").isEmpty();
        assertThat(h.counts.get("live.result.FAILED")).isEqualTo(2);
    }

    // ---- 5. bounded waits ----------------------------------------------------------------------------

    @Test
    void anExpiresAtBeforeNotBeforeEndsExpiredAtExpiresAtNotAtNotBefore() {
        start(Map.of());
        h.send(notification("sched", "42", TEN).setNotBefore(TEN.plus(Duration.ofDays(30))).setExpiresAt(TEN.plusSeconds(60)).build());
        h.advance(Duration.ofSeconds(59), Duration.ofMillis(250));
        assertThat(h.resultsOut.isEmpty()).isTrue();
        h.advance(Duration.ofSeconds(2), Duration.ofMillis(250));
        DeliveryResult r = h.resultsOut.readValue();
        assertThat(r.getMessageId()).isEqualTo("sched");
        assertThat(r.getStatus()).isEqualTo(DeliveryStatus.EXPIRED);
        assertThat(r.getResultAt()).isBetween(TEN.plusSeconds(60), TEN.plusMillis(60_250));
        assertThat(h.outboxLive.isEmpty()).isTrue();
    }

    @Test
    void aNotBeforeBeyondTheHorizonIsDeadLetteredWithTheReasonAndAResult() {
        start(Map.of());
        h.send(notification("far", "42", TEN).setNotBefore(Instant.parse("9999-01-01T00:00:00Z")).build());
        h.send(notification("near", "42", TEN).setNotBefore(TEN.plus(Duration.ofDays(399))).build());
        TestRecord<byte[], byte[]> dlq = h.dlq.readRecord();
        assertThat(reason(dlq)).contains("not_before").contains("9999-01-01T00:00:00Z").contains("schedule.max.horizon.ms");
        assertThat(h.dlq.isEmpty()).isTrue();
        DeliveryResult r = h.resultsOut.readValue();
        assertThat(r.getMessageId()).isEqualTo("far");
        assertThat(r.getStatus()).isEqualTo(DeliveryStatus.FAILED);
        assertThat(h.resultsOut.isEmpty()).isTrue();
        assertThat(h.counts.get("live.scheduled")).isEqualTo(1);
    }

    // ---- 6. field size bounds ------------------------------------------------------------------------

    @Test
    void everyFieldIsBoundedAndTheReasonNamesTheFieldAndItsSize() {
        start(Map.of());
        Map<String, String> bigAttributes = new HashMap<>();
        bigAttributes.put("blob", "a".repeat(20_000));
        h.send(notification("x".repeat(12_000), "42", TEN).build());
        h.send(notification("kind", "42", TEN).setKind("k".repeat(300)).build());
        h.send(notification("entity", "42", TEN).setEntity("e".repeat(2_000)).build());
        h.send(notification("user", "42", TEN).setUserId("u".repeat(300)).build());
        h.send(notification("attrs", "42", TEN).setAttributes(bigAttributes).build());
        h.send(notification("pool", "42", TEN).setBotPool(java.util.Collections.nCopies(17, "alerts")).build());
        h.send(notification("bot", "42", TEN).setBotId("b".repeat(65)).build());
        h.send(notification("chat", "4\u00002", TEN).build());
        h.send(notification("ok", "42", TEN).build());

        List<String> reasons = h.dlq.readRecordsToList().stream().map(ReliabilityTest::reason).toList();
        assertThat(reasons).hasSize(8);
        assertThat(reasons.get(0)).startsWith("field id has 12000 bytes, more than 256");
        assertThat(reasons.get(0).length()).as("the value is shortened in the reason").isLessThan(400);
        assertThat(reasons.get(1)).startsWith("field kind has 300 bytes");
        assertThat(reasons.get(2)).startsWith("field entity has 2000 bytes");
        assertThat(reasons.get(3)).startsWith("field user_id has 300 bytes");
        assertThat(reasons.get(4)).startsWith("field attributes has 20004 bytes");
        assertThat(reasons.get(5)).startsWith("field bot_pool has 17 entries, more than 16");
        assertThat(reasons.get(6)).startsWith("field bot_id has 65 bytes");
        assertThat(reasons.get(7)).startsWith("field chat_id contains a control character");
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("ok");
        assertThat(h.resultsOut.readValuesToList()).hasSize(8).allMatch(r -> r.getStatus() == DeliveryStatus.FAILED);
    }

    // ---- 7. chat ids normalised ----------------------------------------------------------------------

    @Test
    void chatIdsAreTrimmedAndUsernamesCaseInsensitiveBeforeTheyKeyAnything() {
        start(Map.of());
        h.send(notification("a", " @MyGroup ", TEN).setEventClass(NotificationClass.CRITICAL).build());
        h.send(notification("b", "@mygroup", TEN).setEventClass(NotificationClass.CRITICAL).build());
        h.send(notification("c", " -1001234", TEN).setEventClass(NotificationClass.CRITICAL).build());
        List<TestRecord<String, OutboundMessage>> out = h.outboxLive.readRecordsToList();
        assertThat(out).extracting(TestRecord::key).containsExactly("@mygroup", "@mygroup", "-1001234");
        assertThat(out).extracting(r -> r.value().getChatId()).containsExactly("@mygroup", "@mygroup", "-1001234");
        h.chatEvent("alerts", "@MYGROUP ", ChatEventType.BLOCKED, null);
        h.send(notification("d", "@myGroup", TEN).build());
        TestRecord<String, DeliveryResult> skipped = h.resultsOut.readRecord();
        assertThat(skipped.key()).isEqualTo("@mygroup");
        assertThat(skipped.value().getStatus()).isEqualTo(DeliveryStatus.SKIPPED_INACTIVE);
    }

    // ---- 3. chat status per (bot, chat) --------------------------------------------------------------

    @Test
    void aChatThatBlockedBotAStillReceivesFromBotBAndActiveForAClearsOnlyA() {
        start(Map.of());
        h.result(senderResult("m-0", "alerts", "42", DeliveryStatus.BLOCKED, "Forbidden: bot was blocked by the user", 403));
        h.send(notification("a-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).build());
        h.send(notification("b-1", "42", TEN).setBotId("news").setEventClass(NotificationClass.CRITICAL).build());
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("b-1");
        DeliveryResult skipped = h.resultsOut.readValue();
        assertThat(skipped.getMessageId()).isEqualTo("a-1");
        assertThat(skipped.getStatus()).isEqualTo(DeliveryStatus.SKIPPED_INACTIVE);
        assertThat(skipped.getReason()).contains("Forbidden: bot was blocked by the user (bot alerts)");

        // Bot B delivering to the chat says nothing about bot A.
        h.advance(Duration.ofSeconds(1));
        h.result(senderResult("b-1", "news", "42", DeliveryStatus.DELIVERED, null, null));
        h.send(notification("a-2", "42", TEN).setEventClass(NotificationClass.CRITICAL).build());
        assertThat(h.resultsOut.readValue().getMessageId()).isEqualTo("a-2");
        assertThat(h.outboxLive.isEmpty()).isTrue();

        // The user writes to bot A again: its backend sends ACTIVE for A.
        h.advance(Duration.ofSeconds(1));
        h.chatEvent("alerts", "42", ChatEventType.ACTIVE, null);
        h.send(notification("a-3", "42", TEN).setEventClass(NotificationClass.CRITICAL).build());
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("a-3");
        assertThat(h.resultsOut.isEmpty()).isTrue();
    }

    @Test
    void aNewerEventForEveryBotAlsoOverridesEachBotsOwnOlderFact() {
        start(Map.of());
        h.result(senderResult("m-0", "alerts", "44", DeliveryStatus.BLOCKED, "Forbidden: bot was blocked by the user", 403));
        h.send(notification("a-1", "44", TEN).build());
        assertThat(h.resultsOut.readValue().getStatus()).isEqualTo(DeliveryStatus.SKIPPED_INACTIVE);
        h.advance(Duration.ofSeconds(1));
        h.chatEvent("*", "44", ChatEventType.ACTIVE, null);
        h.send(notification("a-2", "44", TEN).setEventClass(NotificationClass.CRITICAL).build());
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("a-2");
        // An every-bot fact older than the bot's own is ignored for that bot.
        h.chatEvents.pipeInput("44", dev.sluice.avro.ChatEvent.newBuilder().setBotId("*").setChatId("44")
                .setType(ChatEventType.BLOCKED).setAt(h.now().minusSeconds(30)).build());
        h.send(notification("a-3", "44", TEN).setEventClass(NotificationClass.CRITICAL).build());
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("a-3");
        assertThat(h.resultsOut.isEmpty()).isTrue();
    }

    @Test
    void anEventForEveryBotAppliesToEachBotUntilThatBotsOwnNewerFact() {
        start(Map.of());
        h.chatEvent("*", "43", ChatEventType.DEACTIVATED, null);
        h.send(notification("a-1", "43", TEN).build());
        h.send(notification("b-1", "43", TEN).setBotId("news").build());
        assertThat(h.resultsOut.readValuesToList()).extracting(DeliveryResult::getMessageId).containsExactly("a-1", "b-1");
        h.advance(Duration.ofSeconds(1));
        h.chatEvent("news", "43", ChatEventType.ACTIVE, null);
        h.send(notification("a-2", "43", TEN).build());
        h.send(notification("b-2", "43", TEN).setBotId("news").build());
        assertThat(h.resultsOut.readValuesToList()).extracting(DeliveryResult::getMessageId).containsExactly("a-2");
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("b-2");
    }
}
