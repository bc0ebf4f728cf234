package dev.sluice.app.tools;

import static dev.sluice.app.tools.RichStack.BOT;
import static dev.sluice.app.tools.RichStack.line;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramCall;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.FakeTelegramMessage;
import dev.sluice.testkit.TelegramBehaviour;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 20's "done when" through a running pipeline: the embedded broker, the real topology, a real sender and
 * FakeTelegram with Telegram's published limits. Rich sends (buttons, photo with caption, silent, forum topic, no link
 * preview) arrive with their options; edits and deletes act on the delivered message, an edit of a still-queued original
 * lands after it, and the provider's "message is not modified" / "message to edit not found" end with their defined
 * results; a digest of 300 folded items is one message within 4,096 characters.
 */
class RichSenderPipelineIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration BOUND = Duration.ofSeconds(90);

    @Test
    void richSendsEditsDeletesAndADigestReachFakeTelegramAsAsked(@TempDir Path dir) throws Exception {
        try (FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram());
             RichStack stack = new RichStack(dir, telegram, Map.of("classify.kind.patterns", "board.*=COLLAPSIBLE",
                     "digest.flush.interval.ms", "600000", "digest.max.folded.ids", "300"))) {
            // 1. Rich sends.
            String markup = "{\"inline_keyboard\":[[{\"text\":\"Open task\",\"url\":\"https://example.com/tasks/42\"},"
                    + "{\"text\":\"Snooze 10 min\",\"callback_data\":\"snooze:42:10\"}]]}";
            stack.produce(List.of(
                    line("btn-1", "8001", "Standup in 10 minutes", "\"reply_markup\":" + markup),
                    line("photo-1", "8002", "Weekly chart", "\"media\":{\"type\":\"photo\",\"url\":\"https://example.com/chart.png\"}"),
                    line("silent-1", "8003", "Nightly backup done", "\"disable_notification\":true"),
                    line("topic-1", "-1008004", "Deploy finished", "\"message_thread_id\":77"),
                    line("nopreview-1", "8005", "See https://example.com/report", "\"link_preview_disabled\":true")));
            // 2. Originals for the edits and deletes. Chat 8011's original is answered 429 retry_after 3 s once (FakeTelegram's
            // scripted answer), so it is still queued, held by the chat's penalty, when its edit, produced right behind it,
            // reaches the topology.
            telegram.enqueueForChat(BOT, "8011", TelegramBehaviour.tooManyRequests(Duration.ofSeconds(3)), 1);
            List<String> second = new ArrayList<>(List.of(
                    line("status-1", "8010", "build: 10%", ""),
                    line("bye-1", "8012", "meeting at 15:00", ""),
                    line("same-1", "8013", "unchanged", ""),
                    line("gone-1", "8014", "will be deleted", "")));
            second.add(line("queued-1", "8011", "build: queued", ""));
            second.add(line("queued-edit-1", "8011", "build: started", "\"edit_of\":\"queued-1\""));
            stack.produce(second);

            Map<String, DeliveryResult> r = stack.awaitResults(BOUND, "btn-1", "photo-1", "silent-1", "topic-1", "nopreview-1",
                    "status-1", "bye-1", "same-1", "gone-1", "queued-1", "queued-edit-1");
            for (String id : List.of("btn-1", "photo-1", "silent-1", "topic-1", "nopreview-1", "status-1", "bye-1", "same-1",
                    "gone-1", "queued-1", "queued-edit-1")) {
                assertThat(r.get(id).getStatus()).as(id + ": " + r.get(id).getReason()).isEqualTo(DeliveryStatus.DELIVERED);
            }
            FakeTelegramMessage btn = message(telegram, "8001", r.get("btn-1"));
            assertThat(btn.method()).isEqualTo("sendMessage");
            assertThat(btn.text()).isEqualTo("Standup in 10 minutes");
            assertThat(JSON.readTree(btn.replyMarkup())).isEqualTo(JSON.readTree(markup));
            FakeTelegramMessage photo = message(telegram, "8002", r.get("photo-1"));
            assertThat(photo.method()).isEqualTo("sendPhoto");
            assertThat(photo.mediaType()).isEqualTo("photo");
            assertThat(photo.media()).isEqualTo("https://example.com/chart.png");
            assertThat(photo.text()).as("the caption").isEqualTo("Weekly chart");
            FakeTelegramMessage silent = message(telegram, "8003", r.get("silent-1"));
            assertThat(silent.silent()).isTrue();
            assertThat(message(telegram, "8001", r.get("btn-1")).silent()).as("not silent unless asked").isFalse();
            assertThat(message(telegram, "-1008004", r.get("topic-1")).threadId()).isEqualTo(77L);
            assertThat(message(telegram, "8005", r.get("nopreview-1")).linkPreviewDisabled()).isTrue();
            assertThat(message(telegram, "8001", r.get("btn-1")).linkPreviewDisabled()).isFalse();

            // The queued original's edit landed after it, on its message.
            assertThat(telegram.callsFor("8011")).extracting(FakeTelegramCall::method, FakeTelegramCall::status).containsExactly(
                    tuple("sendMessage", 429), tuple("sendMessage", 200), tuple("editMessageText", 200));
            List<FakeTelegramAccepted> chat8011 = telegram.acceptedFor("8011");
            assertThat(chat8011).extracting(FakeTelegramAccepted::text).containsExactly("build: queued", "build: started");
            assertThat(chat8011.get(1).acceptedAtMillis()).as("the edit after its original")
                    .isGreaterThanOrEqualTo(chat8011.get(0).acceptedAtMillis());
            assertThat(chat8011.get(1).messageId()).isEqualTo(r.get("queued-1").getProviderMessageId());
            assertThat(r.get("queued-edit-1").getProviderMessageId()).isEqualTo(r.get("queued-1").getProviderMessageId());
            assertThat(message(telegram, "8011", r.get("queued-1")).text()).isEqualTo("build: started");

            // 3. Edits and deletes of delivered messages.
            stack.produce(List.of(
                    line("status-2", "8010", "build: 100%", "\"edit_of\":\"status-1\""),
                    line("bye-2", "8012", null, "\"delete_of\":\"bye-1\""),
                    line("same-2", "8013", "unchanged", "\"edit_of\":\"same-1\""),
                    line("gone-2", "8014", null, "\"delete_of\":\"gone-1\""),
                    line("gone-3", "8014", "too late", "\"edit_of\":\"gone-1\"")));
            r = stack.awaitResults(BOUND, "status-2", "bye-2", "same-2", "gone-2", "gone-3");
            assertThat(r.get("status-2").getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
            assertThat(message(telegram, "8010", r.get("status-1")).text()).isEqualTo("build: 100%");
            assertThat(r.get("bye-2").getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
            assertThat(message(telegram, "8012", r.get("bye-1")).deleted()).isTrue();
            assertThat(r.get("same-2").getStatus()).as("message is not modified: the chat shows what was asked")
                    .isEqualTo(DeliveryStatus.DELIVERED);
            assertThat(telegram.callsFor("8013")).extracting(FakeTelegramCall::status).containsExactly(200, 400);
            assertThat(r.get("gone-2").getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
            assertThat(r.get("gone-3").getStatus()).isEqualTo(DeliveryStatus.FAILED);
            assertThat(r.get("gone-3").getReason()).contains("message to edit not found");
            assertThat(message(telegram, "8014", r.get("gone-1")).text()).as("the deleted message kept its text")
                    .isEqualTo("will be deleted");

            // 4. A digest of 300 folded items: one message of at most 4,096 characters.
            List<String> board = new ArrayList<>();
            for (int i = 0; i < 299; i++) {
                board.add("{\"id\":\"board-" + i + "\",\"bot_id\":\"alerts\",\"chat_id\":\"8020\",\"kind\":\"board.card.moved\","
                        + "\"text\":\"Card " + i + " moved from In progress to Done by the release team\"}");
            }
            // The last item's text is 4,048 characters (valid alone): the digest's header plus it would pass 4,096.
            board.add("{\"id\":\"board-299\",\"bot_id\":\"alerts\",\"chat_id\":\"8020\",\"kind\":\"board.card.moved\","
                    + "\"text\":\"" + "Card 299 moved. ".repeat(253) + "\"}");
            stack.produce(board);
            List<FakeTelegramAccepted> digest = org.awaitility.Awaitility.await().atMost(BOUND)
                    .pollInterval(Duration.ofMillis(100)).until(() -> telegram.acceptedFor("8020"), a -> !a.isEmpty());
            DeliveryResult settled = stack.awaitResult(BOUND, x -> x.getChatId().equals("8020"));
            assertThat(settled.getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
            assertThat(settled.getDigestCount()).isEqualTo(300);
            assertThat(settled.getFoldedIds()).hasSize(300);
            assertThat(telegram.callsFor("8020")).as("one call, accepted").hasSize(1);
            assertThat(digest.get(0).text()).startsWith("300 updates to board.card.moved").endsWith(" more characters");
            assertThat(digest.get(0).text().length()).isLessThanOrEqualTo(4096);
            System.out.printf("digest of 300: %d characters, ends '%s'%n", digest.get(0).text().length(),
                    digest.get(0).text().substring(digest.get(0).text().length() - 40));
            assertThat(stack.duplicateResults()).as("one result per id").isZero();
            assertThat(telegram.rejected429Count()).as("only the scripted 429 of chat 8011").isEqualTo(1);
        }
    }

    private static FakeTelegramMessage message(FakeTelegram telegram, String chat, DeliveryResult result) {
        assertThat(result.getProviderMessageId()).as(result.getMessageId() + " provider_message_id").isNotNull();
        return telegram.message(BOT, chat, result.getProviderMessageId()).orElseThrow();
    }
}
