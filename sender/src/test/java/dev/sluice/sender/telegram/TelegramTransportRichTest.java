package dev.sluice.sender.telegram;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.EditPart;
import dev.sluice.avro.InlineButton;
import dev.sluice.avro.InlineKeyboard;
import dev.sluice.avro.Lane;
import dev.sluice.avro.Media;
import dev.sluice.avro.MediaType;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.sender.provider.BotToken;
import dev.sluice.sender.provider.SendOutcome;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.FakeTelegramMessage;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Issue 20: the transport calls the right Bot API method for an OutboundMessage, against FakeTelegram's rules. */
class TelegramTransportRichTest {
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456789");
    private static final String BOT = "123456789";
    private FakeTelegram fake;
    private TelegramTransport transport;

    @BeforeEach
    void start() {
        fake = FakeTelegram.start(FakeTelegramLimits.unlimited());
        transport = new TelegramTransport(fake.apiUrl(), Map.of("alerts", new BotToken(TOKEN)), Duration.ofSeconds(2),
                Duration.ofSeconds(5));
    }

    @AfterEach
    void stop() {
        transport.close();
        fake.close();
    }

    private static OutboundMessage.Builder message(String id, String chat, String text) {
        return OutboundMessage.newBuilder().setId(id).setBotId("alerts").setChatId(chat).setKind("meeting.reminder")
                .setEventClass(NotificationClass.CRITICAL).setLane(Lane.LIVE).setText(text)
                .setCreatedAt(Instant.EPOCH).setDueAt(Instant.EPOCH);
    }

    private static final InlineKeyboard BUTTONS = InlineKeyboard.newBuilder().setRows(List.of(List.of(
            InlineButton.newBuilder().setText("Open task").setUrl("https://tasks.example.com/42").build(),
            InlineButton.newBuilder().setText("Snooze 10 min").setCallbackData("snooze:42:600").build()))).build();

    private long delivered(SendOutcome outcome) {
        assertThat(outcome).isInstanceOf(SendOutcome.Delivered.class);
        return ((SendOutcome.Delivered) outcome).providerMessageId();
    }

    @Test
    void aReminderWithTwoButtonsArrivesWithThatMarkupSilentlyInItsForumTopicWithoutPreview() {
        long id = delivered(transport.send("alerts", "-1001234", message("r-1", "-1001234", "Meeting at 10:00 https://x.example")
                .setReplyMarkup(BUTTONS).setDisableNotification(true).setProtectContent(true).setMessageThreadId(7L)
                .setLinkPreviewDisabled(true).build()));
        FakeTelegramMessage m = fake.message(BOT, "-1001234", id).orElseThrow();
        assertThat(m.method()).isEqualTo("sendMessage");
        assertThat(m.text()).isEqualTo("Meeting at 10:00 https://x.example");
        assertThat(m.replyMarkup()).contains("\"text\":\"Open task\"").contains("\"url\":\"https://tasks.example.com/42\"")
                .contains("\"callback_data\":\"snooze:42:600\"");
        assertThat(m.silent()).isTrue();
        assertThat(m.protectContent()).isTrue();
        assertThat(m.threadId()).isEqualTo(7L);
    }

    @Test
    void eachMediaTypeGoesThroughItsOwnMethodWithTheTextAsCaption() {
        Map<MediaType, String> methods = Map.of(MediaType.PHOTO, "sendPhoto", MediaType.DOCUMENT, "sendDocument",
                MediaType.VIDEO, "sendVideo", MediaType.ANIMATION, "sendAnimation", MediaType.AUDIO, "sendAudio");
        for (MediaType type : MediaType.values()) {
            Media media = type == MediaType.DOCUMENT ? Media.newBuilder().setType(type).setFileId("BQACAgIAAxkBAAIB").build()
                    : Media.newBuilder().setType(type).setUrl("https://files.example.com/" + type + ".bin").build();
            long id = delivered(transport.send("alerts", "42", message("m-" + type, "42", "Chart for " + type)
                    .setMedia(media).setReplyMarkup(BUTTONS).build()));
            FakeTelegramMessage m = fake.message(BOT, "42", id).orElseThrow();
            assertThat(m.method()).isEqualTo(methods.get(type));
            assertThat(m.mediaType()).isEqualTo(type.name().toLowerCase());
            assertThat(m.media()).isEqualTo(media.getUrl() != null ? media.getUrl() : media.getFileId());
            assertThat(m.text()).as("the caption").isEqualTo("Chart for " + type);
            assertThat(m.replyMarkup()).contains("snooze:42:600");
        }
    }

    @Test
    void editsChangeTheIssuedMessageAndTheirDefinedAnswersAreResults() {
        long text = delivered(transport.send("alerts", "42", message("t", "42", "Build 7: running").setReplyMarkup(BUTTONS).build()));
        long photo = delivered(transport.send("alerts", "42", message("p", "42", "old caption")
                .setMedia(Media.newBuilder().setType(MediaType.PHOTO).setUrl("https://x.example/p.png").build()).build()));

        assertThat(delivered(transport.send("alerts", "42", message("e1", "42", "Build 7: passed").setEditOf("t")
                .setEditPart(EditPart.TEXT).setTargetProviderMessageId(text).build()))).isEqualTo(text);
        assertThat(fake.message(BOT, "42", text).orElseThrow().text()).isEqualTo("Build 7: passed");
        assertThat(fake.message(BOT, "42", text).orElseThrow().replyMarkup()).as("an edit without markup removes it").isNull();

        // the same text again: Telegram answers "message is not modified"; the chat shows what was asked, so DELIVERED
        assertThat(delivered(transport.send("alerts", "42", message("e2", "42", "Build 7: passed").setEditOf("t")
                .setEditPart(EditPart.TEXT).setTargetProviderMessageId(text).build()))).isEqualTo(text);

        assertThat(delivered(transport.send("alerts", "42", message("e3", "42", "new caption").setEditOf("p")
                .setEditPart(EditPart.CAPTION).setTargetProviderMessageId(photo).build()))).isEqualTo(photo);
        assertThat(fake.message(BOT, "42", photo).orElseThrow().text()).isEqualTo("new caption");

        delivered(transport.send("alerts", "42", message("e4", "42", "").setEditOf("p").setEditPart(EditPart.REPLY_MARKUP)
                .setReplyMarkup(BUTTONS).setTargetProviderMessageId(photo).build()));
        assertThat(fake.message(BOT, "42", photo).orElseThrow().replyMarkup()).contains("Open task");

        SendOutcome wrongPart = transport.send("alerts", "42", message("e5", "42", "text of a photo?").setEditOf("p")
                .setEditPart(EditPart.TEXT).setTargetProviderMessageId(photo).build());
        assertThat(wrongPart).isEqualTo(new SendOutcome.PermanentFailure(400, "Bad Request: there is no text in the message to edit"));

        SendOutcome notFound = transport.send("alerts", "42", message("e6", "42", "x").setEditOf("gone")
                .setEditPart(EditPart.TEXT).setTargetProviderMessageId(999L).build());
        assertThat(notFound).isEqualTo(new SendOutcome.PermanentFailure(400, "Bad Request: message to edit not found"));
    }

    @Test
    void aDeleteRemovesTheMessageOnceAndAnEditOrDeleteWithoutATargetIsNeverCalled() {
        long id = delivered(transport.send("alerts", "42", message("r", "42", "Meeting at 10:00").build()));
        assertThat(delivered(transport.send("alerts", "42", message("d", "42", "").setDeleteOf("r")
                .setTargetProviderMessageId(id).build()))).isEqualTo(id);
        assertThat(fake.message(BOT, "42", id).orElseThrow().deleted()).isTrue();
        assertThat(transport.send("alerts", "42", message("d2", "42", "").setDeleteOf("r").setTargetProviderMessageId(id).build()))
                .isEqualTo(new SendOutcome.PermanentFailure(400, "Bad Request: message to delete not found"));

        long calls = fake.requestCount();
        SendOutcome noTarget = transport.send("alerts", "42", message("d3", "42", "").setDeleteOf("never-delivered").build());
        assertThat(noTarget).isInstanceOf(SendOutcome.PermanentFailure.class);
        assertThat(((SendOutcome.PermanentFailure) noTarget).description())
                .isEqualTo("deleteMessage: no provider message id of delete_of never-delivered (target_provider_message_id null); not called");
        assertThat(fake.requestCount()).isEqualTo(calls);
    }

    @Test
    void theTextOnlyPathIsUnchangedForAMessageWithoutExtras() {
        long id = delivered(transport.send("alerts", "42", message("plain", "42", "<b>hi</b>").setParseMode("HTML").build()));
        assertThat(fake.message(BOT, "42", id).orElseThrow().method()).isEqualTo("sendMessage");
        assertThat(fake.accepted()).extracting(FakeTelegramAccepted::text).containsExactly("<b>hi</b>");
    }
}
