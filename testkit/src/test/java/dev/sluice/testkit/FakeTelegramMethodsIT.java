package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import com.pengrad.telegrambot.TelegramBot;
import com.pengrad.telegrambot.model.request.InlineKeyboardButton;
import com.pengrad.telegrambot.model.request.InlineKeyboardMarkup;
import com.pengrad.telegrambot.request.BaseRequest;
import com.pengrad.telegrambot.request.DeleteMessage;
import com.pengrad.telegrambot.request.EditMessageCaption;
import com.pengrad.telegrambot.request.EditMessageReplyMarkup;
import com.pengrad.telegrambot.request.EditMessageText;
import com.pengrad.telegrambot.request.SendDocument;
import com.pengrad.telegrambot.request.SendMessage;
import com.pengrad.telegrambot.request.SendPhoto;
import com.pengrad.telegrambot.response.BaseResponse;
import com.pengrad.telegrambot.response.SendResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Issue 20: FakeTelegram's media, edit and delete methods, validated as Telegram does, under one set of limits. */
class FakeTelegramMethodsIT {
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456");
    private static final String BOT_ID = "123456";
    private final AtomicLong now = new AtomicLong(1_700_000_000_000L);
    private FakeTelegram fake;
    private TelegramBot bot;

    @AfterEach
    void tearDown() {
        if (bot != null) {
            bot.shutdown();
        }
        if (fake != null) {
            fake.close();
        }
    }

    private TelegramBot start(FakeTelegramLimits limits) {
        Clock clock = new Clock() {
            @Override
            public ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return Instant.ofEpochMilli(now.get());
            }
        };
        fake = FakeTelegram.builder().clock(clock).limits(limits).start();
        bot = new TelegramBot.Builder(TOKEN).apiUrl(fake.apiUrl()).build();
        return bot;
    }

    private static BaseResponse execute(TelegramBot b, BaseRequest<?, ?> request) {
        return b.execute(request);
    }

    private static InlineKeyboardMarkup buttons() {
        return new InlineKeyboardMarkup(new InlineKeyboardButton("Open").url("https://x.example/1"),
                new InlineKeyboardButton("Snooze").callbackData("snooze:1"));
    }

    @Test
    void sendsEditsAndDeletesActOnTheIdsTheFakeIssued() {
        TelegramBot b = start(FakeTelegramLimits.unlimited());
        SendResponse photo = b.execute(new SendPhoto(42L, "https://x.example/chart.png").caption("Chart").replyMarkup(buttons())
                .disableNotification(true));
        assertThat(photo.isOk()).isTrue();
        int photoId = photo.message().messageId();
        SendResponse text = b.execute(new SendMessage(42L, "Build 7: running").messageThreadId(3));
        int textId = text.message().messageId();
        assertThat(textId).isEqualTo(photoId + 1);
        FakeTelegramMessage stored = fake.message(BOT_ID, "42", photoId).orElseThrow();
        assertThat(stored.method()).isEqualTo("sendPhoto");
        assertThat(stored.mediaType()).isEqualTo("photo");
        assertThat(stored.media()).isEqualTo("https://x.example/chart.png");
        assertThat(stored.text()).isEqualTo("Chart");
        assertThat(stored.silent()).isTrue();
        assertThat(stored.replyMarkup()).contains("snooze:1");
        assertThat(fake.message(BOT_ID, "42", textId).orElseThrow().threadId()).isEqualTo(3L);

        assertThat(b.execute(new EditMessageText(42L, textId, "Build 7: passed")).isOk()).isTrue();
        assertThat(fake.message(BOT_ID, "42", textId).orElseThrow().text()).isEqualTo("Build 7: passed");
        BaseResponse same = b.execute(new EditMessageText(42L, textId, "Build 7: passed"));
        assertThat(same.errorCode()).isEqualTo(400);
        assertThat(same.description()).startsWith("Bad Request: message is not modified");
        assertThat(b.execute(new EditMessageText(42L, photoId, "text?")).description())
                .isEqualTo("Bad Request: there is no text in the message to edit");
        assertThat(b.execute(new EditMessageCaption(42L, textId).caption("caption?")).description())
                .isEqualTo("Bad Request: there is no caption in the message to edit");
        assertThat(b.execute(new EditMessageCaption(42L, photoId).caption("Chart, updated")).isOk()).isTrue();
        assertThat(b.execute(new EditMessageReplyMarkup(42L, photoId).replyMarkup(new InlineKeyboardMarkup())).isOk()).isTrue();
        assertThat(fake.message(BOT_ID, "42", photoId).orElseThrow().replyMarkup()).doesNotContain("snooze");
        assertThat(b.execute(new EditMessageText(42L, 999, "x")).description()).isEqualTo("Bad Request: message to edit not found");
        assertThat(b.execute(new EditMessageText(43L, textId, "other chat")).description())
                .as("ids are per chat").isEqualTo("Bad Request: message to edit not found");

        assertThat(b.execute(new DeleteMessage(42L, textId)).isOk()).isTrue();
        assertThat(fake.message(BOT_ID, "42", textId).orElseThrow().deleted()).isTrue();
        assertThat(b.execute(new DeleteMessage(42L, textId)).description()).isEqualTo("Bad Request: message to delete not found");
        assertThat(b.execute(new EditMessageText(42L, textId, "after delete")).description())
                .isEqualTo("Bad Request: message to edit not found");
        assertThat(fake.accepted()).extracting(FakeTelegramAccepted::method).containsExactly("sendPhoto", "sendMessage",
                "editMessageText", "editMessageCaption", "editMessageReplyMarkup", "deleteMessage");
    }

    @Test
    void requestsTelegramWouldRefuseAreRefusedWithItsDescriptions() {
        TelegramBot b = start(FakeTelegramLimits.unlimited());
        assertThat(b.execute(new SendPhoto(42L, "").caption("x")).description()).isEqualTo("Bad Request: there is no photo in the request");
        assertThat(b.execute(new SendPhoto(42L, "https://x.example/p.png").caption("c".repeat(1025))).description())
                .isEqualTo("Bad Request: message caption is too long");
        assertThat(b.execute(new SendDocument(42L, "ftp://x.example/f.pdf")).description()).isEqualTo("Bad Request: wrong HTTP URL specified");
        assertThat(b.execute(new SendMessage(42L, "x").replyMarkup(new InlineKeyboardMarkup(
                new InlineKeyboardButton("Go").callbackData("d".repeat(65))))).description()).isEqualTo("Bad Request: BUTTON_DATA_INVALID");
        assertThat(b.execute(new SendMessage(42L, "x").replyMarkup(new InlineKeyboardMarkup(
                new InlineKeyboardButton("Go").url("javascript:alert(1)")))).description()).isEqualTo("Bad Request: BUTTON_URL_INVALID");
        assertThat(b.execute(new EditMessageText(42L, 0, "x")).description()).isEqualTo("Bad Request: message identifier is not specified");
        assertThat(fake.accepted()).isEmpty();
    }

    @Test
    void everyMethodSpendsTheSameGroupLimit() {
        TelegramBot b = start(FakeTelegramLimits.telegram());
        int first = b.execute(new SendMessage(-42L, "m0")).message().messageId();
        int lastPhoto = 0;
        for (int i = 1; i < 20; i++) {
            now.addAndGet(1000);
            BaseRequest<?, ?> call = switch (i % 4) {
                case 0 -> new SendMessage(-42L, "m" + i);
                case 1 -> new SendPhoto(-42L, "https://x.example/" + i + ".png").caption("p" + i);
                case 2 -> new EditMessageText(-42L, first, "edit " + i);
                default -> new DeleteMessage(-42L, lastPhoto);
            };
            BaseResponse r = execute(b, call);
            assertThat(r.isOk()).as("call %d: %s", i, r.description()).isTrue();
            if (r instanceof SendResponse sent && call instanceof SendPhoto) {
                lastPhoto = sent.message().messageId();
            }
        }
        now.addAndGet(1000);
        BaseResponse refused = b.execute(new EditMessageText(-42L, first, "the 21st call in a minute"));
        assertThat(refused.errorCode()).as("an edit is refused by the group's 20 per minute").isEqualTo(429);
        assertThat(b.execute(new DeleteMessage(-42L, first)).errorCode()).isEqualTo(429);
        assertThat(fake.maxGroupMessagesPer(Duration.ofSeconds(60))).isEqualTo(20);
        assertThat(fake.rejected429Count()).isEqualTo(2);
    }
}
