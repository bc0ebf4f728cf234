package dev.sluice.topology;

import static dev.sluice.topology.Harness.notification;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.InlineButton;
import dev.sluice.avro.InlineKeyboard;
import dev.sluice.avro.Media;
import dev.sluice.avro.MediaType;
import dev.sluice.avro.MessagePart;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * {@code text.too.long=split} on the TopologyTestDriver: node {@code live-route} ({@link Outbound#parts}) sends a too-long text as ordered
 * parts on the chat's key, validation dead-letters what would need more than {@code text.split.max.parts}, and
 * {@code delivery-parts-aggregate} folds the parts' results into exactly one result on {@code delivery.results}.
 */
class SplitTopologyTest extends HarnessTest {
    private static final Instant TEN = Instant.parse("2026-03-02T10:00:00Z");
    private static final Map<String, String> SPLIT = Map.of("text.too.long", "split");

    /** About 9,000 characters in paragraphs of about 230. */
    static String longText(int length) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; b.length() < length; i++) {
            b.append("Paragraph ").append(i).append(": ").append("lorem ipsum dolor sit amet ".repeat(8).trim()).append("\n\n");
        }
        return b.substring(0, length).trim();
    }

    private static InlineKeyboard buttons() {
        return InlineKeyboard.newBuilder().setRows(List.of(List.of(InlineButton.newBuilder().setText("Open")
                .setUrl("https://tasks.example.com/42").build()))).build();
    }

    @Test
    void aTooLongTextLeavesAsOrderedPartsOnTheChatsKeyWithTheKeyboardOnPartOneAndLaterPartsSilent() {
        h = new Harness(stateDir, TEN, SPLIT);
        String text = longText(9_000);
        h.send(notification("long-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).setText(text).setReplyMarkup(buttons())
                .setBotPool(List.of("alerts", "alerts-2")).setMessageThreadId(7L).build());
        h.send(notification("after", "42", TEN).setEventClass(NotificationClass.CRITICAL).build());

        List<TestRecord<String, OutboundMessage>> out = h.outboxLive.readRecordsToList();
        assertThat(out).extracting(TestRecord::key).containsOnly("42");
        assertThat(out).extracting(r -> r.value().getId()).containsExactly("long-1#1/3", "long-1#2/3", "long-1#3/3", "after");
        List<OutboundMessage> parts = out.subList(0, 3).stream().map(TestRecord::value).toList();
        assertThat(parts).allSatisfy(p -> {
            assertThat(p.getText().length()).isBetween(1, 4096);
            assertThat(p.getPart().getParentId()).isEqualTo("long-1");
            assertThat(p.getPart().getCount()).isEqualTo(3);
            assertThat(p.getBotPool()).as("all parts from bot_id, in order").isEmpty();
            assertThat(p.getMessageThreadId()).isEqualTo(7L);
            assertThat(p.getDigestCount()).isZero();
        });
        assertThat(parts).extracting(p -> p.getPart().getIndex()).containsExactly(1, 2, 3);
        assertThat(String.join("\n\n", parts.stream().map(OutboundMessage::getText).toList())).isEqualTo(text);
        assertThat(parts.get(0).getReplyMarkup()).isEqualTo(buttons());
        assertThat(parts.get(0).getDisableNotification()).isFalse();
        assertThat(parts.subList(1, 3)).allSatisfy(p -> {
            assertThat(p.getReplyMarkup()).isNull();
            assertThat(p.getDisableNotification()).as("one notification, one alert").isTrue();
        });
        assertThat(out.get(3).value().getPart()).isNull();
        assertThat(h.dlq.isEmpty()).isTrue();
        assertThat(h.resultsOut.isEmpty()).isTrue();
    }

    @Test
    void aLongCaptionKeepsItsMediaOnPartOneWithinTheCaptionLimitAndTheRestAsText() {
        h = new Harness(stateDir, TEN, SPLIT);
        Media photo = Media.newBuilder().setType(MediaType.PHOTO).setUrl("https://charts.example.com/q.png").build();
        h.send(notification("cap", "42", TEN).setEventClass(NotificationClass.CRITICAL).setText(longText(3_000)).setMedia(photo).build());
        List<OutboundMessage> parts = h.drainLive();
        assertThat(parts).extracting(OutboundMessage::getId).containsExactly("cap#1/2", "cap#2/2");
        assertThat(parts.get(0).getMedia()).isEqualTo(photo);
        assertThat(parts.get(0).getText().length()).isBetween(512, 1024);
        assertThat(parts.get(1).getMedia()).isNull();
        assertThat(parts.get(1).getText().length()).isBetween(1, 4096);
    }

    @Test
    void byDefaultATooLongTextIsDeadLetteredAsBefore() {
        h = new Harness(stateDir, TEN, Map.of());
        h.send(notification("long-2", "42", TEN).setEventClass(NotificationClass.CRITICAL).setText(longText(5_000)).build());
        assertThat(h.outboxLive.isEmpty()).isTrue();
        assertThat(reasons()).containsExactly("field text has 5000 characters, more than the 4096 allowed by Telegram sendMessage"
                + " (notification id long-2)");
        assertThat(h.resultsOut.readValue().getStatus()).isEqualTo(DeliveryStatus.FAILED);
    }

    @Test
    void aTextNeedingMorePartsThanAllowedIsDeadLetteredNamingTheFieldItsLengthAndTheKey() {
        h = new Harness(stateDir, TEN, Map.of("text.too.long", "split", "text.split.max.parts", "2"));
        h.send(notification("huge", "42", TEN).setEventClass(NotificationClass.CRITICAL).setText(longText(9_000)).build());
        h.send(notification("edit", "42", TEN).setEventClass(NotificationClass.CRITICAL).setEditOf("x").setText(longText(5_000)).build());
        assertThat(h.outboxLive.isEmpty()).isTrue();
        assertThat(reasons()).containsExactly(
                "field text has 9000 characters: split at paragraph, line and word boundaries into parts of at most 4096 it"
                        + " needs more than the 2 parts text.split.max.parts allows (notification id huge)",
                "field text has 5000 characters, more than the 4096 allowed by Telegram editMessageText (notification id edit)");
        assertThat(h.resultsOut.readValuesToList()).extracting(DeliveryResult::getMessageId, DeliveryResult::getStatus)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("huge", DeliveryStatus.FAILED),
                        org.assertj.core.groups.Tuple.tuple("edit", DeliveryStatus.FAILED));
    }

    @Test
    void thePartsResultsBecomeExactlyOneDeliveredResultWithPartOnesMessageIdOnceAllAreIn() {
        h = new Harness(stateDir, TEN, SPLIT);
        h.send(notification("long-3", "42", TEN).setEventClass(NotificationClass.CRITICAL).setText(longText(9_000)).build());
        List<OutboundMessage> parts = h.drainLive();
        assertThat(parts).hasSize(3);

        // results arrive in any order, one twice (a sender that crashed after writing it)
        h.partResult(partResult(parts.get(1), DeliveryStatus.DELIVERED, 102L, null));
        h.partResult(partResult(parts.get(0), DeliveryStatus.DELIVERED, 101L, null));
        h.partResult(partResult(parts.get(1), DeliveryStatus.DELIVERED, 102L, null));
        assertThat(h.resultsOut.isEmpty()).as("no result before every part has one").isTrue();
        h.advance(Duration.ofSeconds(2));
        h.partResult(partResult(parts.get(2), DeliveryStatus.DELIVERED, 103L, null));

        List<TestRecord<String, DeliveryResult>> results = h.resultsOut.readRecordsToList();
        assertThat(results).singleElement().satisfies(r -> {
            assertThat(r.key()).isEqualTo("42");
            DeliveryResult v = r.value();
            assertThat(v.getMessageId()).isEqualTo("long-3");
            assertThat(v.getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
            assertThat(v.getProviderMessageId()).isEqualTo(101L);
            assertThat(v.getPart()).isNull();
            assertThat(v.getAttempts()).isEqualTo(3);
            assertThat(v.getReason()).isNull();
            assertThat(v.getDueAt()).isEqualTo(parts.get(0).getDueAt());
            assertThat(v.getSentAt()).isEqualTo(TEN.plusSeconds(2));
        });

        // late copies of the parts' results (a sender redelivering after a crash) write no second result
        parts.forEach(p -> h.partResult(partResult(p, DeliveryStatus.DELIVERED, 100L + p.getPart().getIndex(), null)));
        h.advance(Duration.ofHours(1));
        assertThat(h.resultsOut.isEmpty()).isTrue();

        // an edit of the split notification addresses part 1 (its result names part 1's provider message id)
        h.send(notification("edit-3", "42", TEN).setEventClass(NotificationClass.CRITICAL).setEditOf("long-3").setText("short now").build());
        h.advance(Duration.ofMillis(EditAddressing.CHECK_INTERVAL_MS));
        assertThat(h.drainLive()).singleElement().satisfies(e -> assertThat(e.getTargetProviderMessageId()).isEqualTo(101L));
    }

    @Test
    void theFirstPartThatWasNotDeliveredDecidesTheResult() {
        h = new Harness(stateDir, TEN, SPLIT);
        h.send(notification("long-4", "42", TEN).setEventClass(NotificationClass.CRITICAL).setText(longText(9_000)).build());
        List<OutboundMessage> parts = h.drainLive();
        h.partResult(partResult(parts.get(2), DeliveryStatus.FAILED, null, "Bad Request: message text is empty"));
        h.partResult(partResult(parts.get(0), DeliveryStatus.DELIVERED, 201L, null));
        h.partResult(partResult(parts.get(1), DeliveryStatus.BLOCKED, null, "Forbidden: bot was blocked by the user"));

        assertThat(h.resultsOut.readValuesToList()).singleElement().satisfies(v -> {
            assertThat(v.getMessageId()).isEqualTo("long-4");
            assertThat(v.getStatus()).isEqualTo(DeliveryStatus.BLOCKED);
            assertThat(v.getReason()).isEqualTo("part 2/3: Forbidden: bot was blocked by the user");
            assertThat(v.getErrorCode()).isEqualTo(403);
            assertThat(v.getProviderMessageId()).as("part 1 exists at the provider").isEqualTo(201L);
        });
    }

    @Test
    void aReplayOfTheSameIdGetsItsOwnResult() {
        h = new Harness(stateDir, TEN, SPLIT);
        h.send(notification("long-5", "42", TEN).setEventClass(NotificationClass.CRITICAL).setText(longText(5_000)).build());
        List<OutboundMessage> first = h.drainLive();
        first.forEach(p -> h.partResult(partResult(p, DeliveryStatus.FAILED, null, "Bad Request: chat not found")));
        assertThat(h.resultsOut.readValuesToList()).extracting(DeliveryResult::getStatus).containsExactly(DeliveryStatus.FAILED);

        // replayed after the dedupe window under the same id: new parts, new due_at, a new result
        h.advance(Duration.ofDays(2), Duration.ofHours(1));
        h.send(notification("long-5", "42", h.now()).setEventClass(NotificationClass.CRITICAL).setText(longText(5_000)).build());
        List<OutboundMessage> again = h.drainLive();
        assertThat(again).extracting(OutboundMessage::getId).containsExactly("long-5#1/2", "long-5#2/2");
        again.forEach(p -> h.partResult(partResult(p, DeliveryStatus.DELIVERED, 7L, null)));
        assertThat(h.resultsOut.readValuesToList()).extracting(DeliveryResult::getStatus).containsExactly(DeliveryStatus.DELIVERED);
    }

    @Test
    void aResultWithoutAPartOnThePartsTopicIsPassedOnNotLost() {
        h = new Harness(stateDir, TEN, SPLIT);
        OutboundMessage m = OutboundMessage.newBuilder().setId("plain").setBotId("alerts").setChatId("42").setKind("k")
                .setEventClass(NotificationClass.ROUTINE).setText("t").setCreatedAt(TEN).setDueAt(TEN).build();
        h.partResult(partResult(m, DeliveryStatus.DELIVERED, 9L, null));
        assertThat(h.resultsOut.readValuesToList()).extracting(DeliveryResult::getMessageId).containsExactly("plain");
    }

    /** A part's result as the sender writes it: {@code part} copied from the OutboundMessage. */
    private DeliveryResult partResult(OutboundMessage m, DeliveryStatus status, Long providerMessageId, String reason) {
        return DeliveryResult.newBuilder().setMessageId(m.getId()).setBotId(m.getBotId()).setChatId(m.getChatId())
                .setStatus(status).setEventClass(m.getEventClass()).setLane(m.getLane()).setReason(reason)
                .setErrorCode(status == DeliveryStatus.DELIVERED ? null : status == DeliveryStatus.BLOCKED ? 403 : 400)
                .setProviderMessageId(providerMessageId).setAttempts(1).setDueAt(m.getDueAt()).setSentAt(h.now())
                .setResultAt(h.now()).setSenderInstance("sender-1").setPart(m.getPart() == null ? null
                        : MessagePart.newBuilder(m.getPart()).build()).build();
    }

    private List<String> reasons() {
        List<String> out = new ArrayList<>();
        h.dlq.readRecordsToList().forEach(r -> out.add(new String(r.headers().lastHeader(DeadLetterHeaders.REASON).value(),
                StandardCharsets.UTF_8)));
        return out;
    }
}
