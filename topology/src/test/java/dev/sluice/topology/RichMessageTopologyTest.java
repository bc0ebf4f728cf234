package dev.sluice.topology;

import static dev.sluice.topology.Harness.notification;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.EditPart;
import dev.sluice.avro.InlineButton;
import dev.sluice.avro.InlineKeyboard;
import dev.sluice.avro.Media;
import dev.sluice.avro.MediaType;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;

/** Issue 20 on the TopologyTestDriver: the extras' validation, their way to the outbox, the digest bound, edits unfolded. */
class RichMessageTopologyTest extends HarnessTest {
    private static final Instant TEN = Instant.parse("2026-03-02T10:00:00Z");

    private static InlineButton url(String text, String url) {
        return InlineButton.newBuilder().setText(text).setUrl(url).build();
    }

    private static InlineButton callback(String text, String data) {
        return InlineButton.newBuilder().setText(text).setCallbackData(data).build();
    }

    private static InlineKeyboard keyboard(List<List<InlineButton>> rows) {
        return InlineKeyboard.newBuilder().setRows(rows).build();
    }

    private static Media photo(String url) {
        return Media.newBuilder().setType(MediaType.PHOTO).setUrl(url).build();
    }

    @Test
    void aReminderWithButtonsAPhotoASilentForumPostAndAnEditReachTheOutboxWithTheirExtras() {
        h = new Harness(stateDir, TEN, Map.of());
        InlineKeyboard buttons = keyboard(List.of(List.of(url("Open task", "https://tasks.example.com/42"),
                callback("Snooze 10 min", "snooze:42:600"))));
        h.send(notification("r-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).setReplyMarkup(buttons).build());
        h.send(notification("p-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).setText("")
                .setMedia(photo("https://charts.example.com/q.png")).build());
        h.send(notification("s-1", "-1001234", TEN).setEventClass(NotificationClass.CRITICAL).setDisableNotification(true)
                .setProtectContent(true).setMessageThreadId(7L).setLinkPreviewDisabled(true).build());
        // an edit of a COLLAPSIBLE kind is never folded into a digest: it leaves at once, in order
        h.send(notification("e-1", "42", TEN).setEventClass(NotificationClass.COLLAPSIBLE).setEditOf("r-1")
                .setText("Task 42: done").build());
        h.send(notification("d-1", "42", TEN).setEventClass(NotificationClass.ROUTINE).setDeleteOf("p-1").setText("").build());

        List<OutboundMessage> out = new ArrayList<>(h.drainLive());
        assertThat(out).extracting(OutboundMessage::getId).as("the edit and the delete wait for their originals' results")
                .containsExactly("r-1", "p-1", "s-1");
        delivered(out.get(0), 1L);
        delivered(out.get(1), 2L);
        h.advance(Duration.ofMillis(EditAddressing.CHECK_INTERVAL_MS));
        out.addAll(h.drainLive());
        assertThat(out).extracting(OutboundMessage::getId).containsExactly("r-1", "p-1", "s-1", "e-1", "d-1");
        assertThat(out.get(0).getReplyMarkup()).isEqualTo(buttons);
        assertThat(out.get(1).getMedia()).isEqualTo(photo("https://charts.example.com/q.png"));
        OutboundMessage silent = out.get(2);
        assertThat(silent.getDisableNotification()).isTrue();
        assertThat(silent.getProtectContent()).isTrue();
        assertThat(silent.getMessageThreadId()).isEqualTo(7L);
        assertThat(silent.getLinkPreviewDisabled()).isTrue();
        assertThat(out.get(3).getEditOf()).isEqualTo("r-1");
        assertThat(out.get(3).getEditPart()).as("an edit without edit_part edits the text").isEqualTo(EditPart.TEXT);
        assertThat(out.get(4).getDeleteOf()).isEqualTo("p-1");
        assertThat(out.get(0).getEditPart()).isNull();
        assertThat(h.dlq.isEmpty()).isTrue();
    }

    @Test
    void brokenExtrasAreDeadLetteredWithAReasonNamingTheFieldAndTheValueAndEndFailed() {
        h = new Harness(stateDir, TEN, Map.of());
        Map<String, Notification> bad = new LinkedHashMap<>();
        bad.put("field text has 1025 characters, more than the 1024 allowed by Telegram sendPhoto for a caption (notification id cap)",
                notification("cap", "42", TEN).setText("c".repeat(1025)).setMedia(photo("https://x.example/p.png")).build());
        bad.put("field reply_markup row 1 button 1 callback_data '" + "d".repeat(40) + "\u2026 (65 characters)' has 65"
                        + " bytes; Telegram allows 1 to 64 (UTF-8; notification id cb)",
                notification("cb", "42", TEN).setReplyMarkup(keyboard(List.of(List.of(callback("Go", "d".repeat(65)))))).build());
        bad.put("field reply_markup row 1 button 1 callback_data '\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
                        + "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9'"
                        + " has 66 bytes; Telegram allows 1 to 64 (UTF-8; notification id cb-utf8)",
                notification("cb-utf8", "42", TEN).setReplyMarkup(keyboard(List.of(List.of(callback("Go", "\u00e9".repeat(33)))))).build());
        bad.put("field reply_markup row 1 button 1 url 'javascript:alert(1)' has scheme 'javascript'; allowed: [http, https, tg]"
                        + " (notification id js)",
                notification("js", "42", TEN).setReplyMarkup(keyboard(List.of(List.of(url("Open", "javascript:alert(1)"))))).build());
        bad.put("field reply_markup row 1 button 1 ('Both') has both url and callback_data; it needs exactly one (notification id both)",
                notification("both", "42", TEN).setReplyMarkup(keyboard(List.of(List.of(InlineButton.newBuilder().setText("Both")
                        .setUrl("https://x.example").setCallbackData("b").build())))).build());
        List<InlineButton> nine = new ArrayList<>(Collections.nCopies(9, callback("b", "b")));
        bad.put("field reply_markup row 1 has 9 buttons; a row has 1 to 8 (notification id row)",
                notification("row", "42", TEN).setReplyMarkup(keyboard(List.of(nine))).build());
        List<List<InlineButton>> rows = new ArrayList<>();
        for (int i = 0; i < 13; i++) {
            rows.add(List.of(callback("a", "a"), callback("b", "b"), callback("c", "c"), callback("d", "d"),
                    callback("e", "e"), callback("f", "f"), callback("g", "g"), callback("h", "h")));
        }
        bad.put("field reply_markup has 104 buttons; an inline keyboard has 1 to 100 (notification id many)",
                notification("many", "42", TEN).setReplyMarkup(keyboard(rows)).build());
        bad.put("field media (DOCUMENT) has neither url nor file_id; it needs exactly one (notification id nofile)",
                notification("nofile", "42", TEN).setMedia(Media.newBuilder().setType(MediaType.DOCUMENT).build()).build());
        bad.put("field media url 'ftp://files.example/invoice.pdf' has scheme 'ftp'; allowed: [http, https] (notification id ftp)",
                notification("ftp", "42", TEN).setMedia(Media.newBuilder().setType(MediaType.DOCUMENT)
                        .setUrl("ftp://files.example/invoice.pdf").build()).build());
        bad.put("field message_thread_id is 0, not a positive forum topic id (notification id topic)",
                notification("topic", "-1001234", TEN).setMessageThreadId(0L).build());
        bad.put("fields edit_of 'a' and delete_of 'b' are both set; a notification edits or deletes one message (notification id two)",
                notification("two", "42", TEN).setEditOf("a").setDeleteOf("b").build());
        bad.put("field text has 1025 characters, more than the 1024 allowed by Telegram editMessageCaption for a caption"
                        + " (notification id capedit)",
                notification("capedit", "42", TEN).setEditOf("a").setEditPart(EditPart.CAPTION).setText("c".repeat(1025)).build());
        bad.put("field edit_of names the notification itself ('self')",
                notification("self", "42", TEN).setEditOf("self").build());
        bad.forEach((reason, n) -> h.send(n));

        List<String> reasons = h.dlq.readRecordsToList().stream().map(r -> header(r.headers().lastHeader(DeadLetterHeaders.REASON))).toList();
        assertThat(reasons).containsExactlyElementsOf(bad.keySet());
        List<DeliveryResult> results = h.resultsOut.readValuesToList();
        assertThat(results).extracting(DeliveryResult::getMessageId).containsExactlyElementsOf(
                bad.values().stream().map(Notification::getId).toList());
        assertThat(results).extracting(DeliveryResult::getStatus).containsOnly(DeliveryStatus.FAILED);
        assertThat(h.outboxLive.isEmpty()).isTrue();
    }

    @Test
    void aMediaCaptionMayBeEmptyAndADeleteNeedsNoText() {
        h = new Harness(stateDir, TEN, Map.of());
        h.send(notification("p", "42", TEN).setText("").setMedia(Media.newBuilder().setType(MediaType.ANIMATION)
                .setFileId("CgACAgQAAxkBAAIBQ2VgAAE").build()).build());
        delivered(h.outboxLive.readValue(), 5L);
        h.send(notification("d", "42", TEN).setText("").setDeleteOf("p").build());
        h.send(notification("k", "42", TEN).setText("").setEditOf("p").setEditPart(EditPart.REPLY_MARKUP).build());
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("d", "k");
        assertThat(h.dlq.isEmpty()).isTrue();
    }

    /** A result as the sender's DeliveryProcessor writes it for a delivered single message (or digest). */
    private void delivered(OutboundMessage m, long providerMessageId) {
        h.result(DeliveryResult.newBuilder().setMessageId(m.getId()).setBotId(m.getBotId()).setChatId(m.getChatId())
                .setStatus(DeliveryStatus.DELIVERED).setEventClass(m.getEventClass()).setLane(m.getLane())
                .setProviderMessageId(providerMessageId).setAttempts(1).setDueAt(m.getDueAt()).setSentAt(h.now())
                .setResultAt(h.now()).setDigestCount(m.getDigestCount()).setFoldedIds(m.getFoldedIds())
                .setSenderInstance("sender-1").build());
    }

    @Test
    void anEditOfAQueuedMessageWaitsForItsResultAndTheChatsLaterMessagesWaitBehindIt() {
        h = new Harness(stateDir, TEN, Map.of());
        h.send(notification("r-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).setText("Build 7: running").build());
        OutboundMessage original = h.outboxLive.readValue();
        h.send(notification("e-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).setEditOf("r-1").setText("Build 7: passed").build());
        h.send(notification("x-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).setText("next").build());
        h.send(notification("o-1", "43", TEN).setEventClass(NotificationClass.CRITICAL).setText("another chat").build());
        h.advance(Duration.ofSeconds(5), Duration.ofMillis(200));
        assertThat(h.drainLive()).as("only the other chat's message leaves while r-1 is queued")
                .extracting(OutboundMessage::getId).containsExactly("o-1");

        delivered(original, 17L);
        h.resultsOut.readValuesToList(); // our own input echoed
        h.advance(Duration.ofMillis(EditAddressing.CHECK_INTERVAL_MS));
        List<OutboundMessage> out = h.drainLive();
        assertThat(out).extracting(OutboundMessage::getId).containsExactly("e-1", "x-1");
        assertThat(out.get(0).getTargetProviderMessageId()).isEqualTo(17L);
        assertThat(out.get(1).getTargetProviderMessageId()).isNull();

        // once known, an edit or delete of it leaves at once
        h.send(notification("d-1", "42", TEN).setEventClass(NotificationClass.ROUTINE).setDeleteOf("r-1").setText("").build());
        assertThat(h.drainLive()).singleElement().satisfies(d -> {
            assertThat(d.getId()).isEqualTo("d-1");
            assertThat(d.getTargetProviderMessageId()).isEqualTo(17L);
        });
    }

    @Test
    void anEditOfAMessageThatEndedWithoutOneOrNeverHadAResultEndsFailedWithItsReason() {
        h = new Harness(stateDir, TEN, Map.of("edit.wait.max.ms", "60000"));
        h.send(notification("b-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).build());
        OutboundMessage blocked = h.outboxLive.readValue();
        h.result(DeliveryResult.newBuilder().setMessageId(blocked.getId()).setBotId("alerts").setChatId("42")
                .setStatus(DeliveryStatus.FAILED).setEventClass(NotificationClass.CRITICAL).setErrorCode(400)
                .setReason("Bad Request: chat not found").setAttempts(1).setResultAt(h.now()).setSenderInstance("sender-1").build());
        h.resultsOut.readValuesToList();
        h.send(notification("e-1", "42", TEN).setEventClass(NotificationClass.CRITICAL).setEditOf("b-1").setText("edit").build());
        assertThat(h.resultsOut.readValuesToList()).singleElement().satisfies(r -> {
            assertThat(r.getMessageId()).isEqualTo("e-1");
            assertThat(r.getStatus()).isEqualTo(DeliveryStatus.FAILED);
            assertThat(r.getReason()).isEqualTo("message to edit not found: notification b-1 ended FAILED without a message in chat 42");
            assertThat(r.getSenderInstance()).isEqualTo("topology");
        });

        h.send(notification("d-9", "42", TEN).setEventClass(NotificationClass.CRITICAL).setDeleteOf("never-sent").setText("").build());
        h.send(notification("after", "42", TEN).setEventClass(NotificationClass.CRITICAL).build());
        h.advance(Duration.ofSeconds(59), Duration.ofSeconds(1));
        assertThat(h.drainLive()).isEmpty();
        assertThat(h.resultsOut.isEmpty()).isTrue();
        h.advance(Duration.ofSeconds(1), Duration.ofMillis(200));
        assertThat(h.resultsOut.readValuesToList()).singleElement().satisfies(r -> {
            assertThat(r.getMessageId()).isEqualTo("d-9");
            assertThat(r.getStatus()).isEqualTo(DeliveryStatus.FAILED);
            assertThat(r.getReason()).startsWith("message to delete not found: no result of notification never-sent in chat 42"
                    + " within edit.wait.max.ms (60000 ms)");
        });
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).as("released behind it, in order").containsExactly("after");
    }

    @Test
    void anEditOfAFoldedNotificationEditsItsDigest() {
        h = new Harness(stateDir, TEN, Map.of());
        for (String id : List.of("f-1", "f-2")) {
            h.send(notification(id, "42", TEN).setEventClass(NotificationClass.COLLAPSIBLE).build());
        }
        h.advance(Duration.ofSeconds(60), Duration.ofSeconds(5));
        OutboundMessage digest = h.outboxLive.readValue();
        assertThat(digest.getFoldedIds()).containsExactly("f-1", "f-2");
        delivered(digest, 31L);
        h.send(notification("e-f", "42", TEN).setEventClass(NotificationClass.CRITICAL).setEditOf("f-1")
                .setEditPart(EditPart.REPLY_MARKUP).setReplyMarkup(keyboard(List.of(List.of(callback("Ack", "ack"))))).build());
        assertThat(h.drainLive()).singleElement().satisfies(e -> assertThat(e.getTargetProviderMessageId()).isEqualTo(31L));
    }

    @Test
    void aDigestOf300FoldedFullLengthTextsIsOneMessageOfAtMost4096CharactersEndingWithWhatItLeftOut() {
        h = new Harness(stateDir, TEN, Map.of("digest.max.folded.ids", "1000"));
        for (int i = 0; i < 300; i++) {
            h.send(notification("q-" + i, "42", TEN).setEventClass(NotificationClass.COLLAPSIBLE)
                    .setText(i + " " + "x".repeat(4096 - 1 - Integer.toString(i).length())).build());
        }
        List<OutboundMessage> early = h.drainLive();
        assertThat(early).extracting(OutboundMessage::getId, OutboundMessage::getDigestCount).isEmpty();
        h.advance(Duration.ofSeconds(60), Duration.ofSeconds(5));
        List<OutboundMessage> out = h.drainLive();
        assertThat(out).hasSize(1);
        OutboundMessage digest = out.get(0);
        assertThat(digest.getDigestCount()).isEqualTo(300);
        assertThat(digest.getText()).hasSizeLessThanOrEqualTo(4096).startsWith("300 updates to task.updated task-42")
                .contains("Latest:\n299 xxx").matches("(?s).*\u2026 and \\d+ more characters");
        int header = digest.getText().indexOf("299 x");
        int cut = Integer.parseInt(digest.getText().replaceAll("(?s).*\u2026 and (\\d+) more characters", "$1"));
        assertThat(digest.getText().indexOf('\u2026') - header + cut).as("shown + left out = the latest text").isEqualTo(4096);
    }

    @Test
    void aDigestOfPhotosKeepsTheLatestPhotoAndACaptionOfAtMost1024Characters() {
        h = new Harness(stateDir, TEN, Map.of());
        for (int i = 0; i < 3; i++) {
            h.send(notification("ph-" + i, "42", TEN).setEventClass(NotificationClass.COLLAPSIBLE).setText("y".repeat(1024))
                    .setMedia(photo("https://charts.example.com/" + i + ".png")).build());
        }
        h.advance(Duration.ofSeconds(60), Duration.ofSeconds(5));
        OutboundMessage digest = h.outboxLive.readValue();
        assertThat(digest.getMedia()).isEqualTo(photo("https://charts.example.com/2.png"));
        assertThat(digest.getText()).hasSizeLessThanOrEqualTo(1024).endsWith(" more characters");
    }

    @Test
    void boundedNeverExceedsTheLimitAndNeverSplitsASurrogatePair() {
        String emoji = "\uD83D\uDE00".repeat(3000); // 6,000 UTF-16 units
        for (int max : new int[] {1024, 4096}) {
            String b = Outbound.bounded(emoji, max);
            assertThat(b.length()).isLessThanOrEqualTo(max);
            String kept = b.substring(0, b.indexOf('\u2026'));
            assertThat(Character.isHighSurrogate(kept.charAt(kept.length() - 1))).isFalse();
            int left = Integer.parseInt(b.replaceAll("(?s).*\u2026 and (\\d+) more characters", "$1"));
            assertThat(kept.length() + left).isEqualTo(6000);
        }
        assertThat(Outbound.bounded("short", 4096)).isEqualTo("short");
    }

    private static String header(Header header) {
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }
}
