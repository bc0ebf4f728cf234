package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.avro.EditPart;
import dev.sluice.avro.InlineButton;
import dev.sluice.avro.MediaType;
import dev.sluice.avro.Notification;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/** Issue 20: {@code sluice produce} reads buttons, media, silent sends, forum topics, edits and deletes. */
class RichFieldsJsonTest {
    private final NotificationJson json = new NotificationJson(Clock.fixed(Instant.parse("2025-07-30T01:02:03Z"), ZoneOffset.UTC));

    @Test
    void readsTheReadmesReminderWithButtonsAndAPhoto() {
        Notification n = json.parse(1, "{\"id\":\"standup-7\",\"bot_id\":\"alerts\",\"chat_id\":\"-1001234\",\"kind\":\"meeting.reminder\","
                + "\"event_class\":\"CRITICAL\",\"text\":\"Stand-up in 5 min\",\"message_thread_id\":42,\"disable_notification\":true,"
                + "\"protect_content\":true,\"link_preview_disabled\":true,"
                + "\"media\":{\"type\":\"photo\",\"url\":\"https://charts.example.com/burndown.png\"},"
                + "\"reply_markup\":{\"inline_keyboard\":[[{\"text\":\"Join\",\"url\":\"https://meet.example.com/standup\"},"
                + "{\"text\":\"Snooze 10 min\",\"callback_data\":\"snooze:standup-7:600\"}]]}}");
        assertThat(n.getMedia().getType()).isEqualTo(MediaType.PHOTO);
        assertThat(n.getMedia().getUrl()).isEqualTo("https://charts.example.com/burndown.png");
        assertThat(n.getReplyMarkup().getRows()).singleElement().satisfies(row -> assertThat(row).extracting(InlineButton::getText)
                .containsExactly("Join", "Snooze 10 min"));
        assertThat(n.getReplyMarkup().getRows().get(0).get(1).getCallbackData()).isEqualTo("snooze:standup-7:600");
        assertThat(n.getMessageThreadId()).isEqualTo(42L);
        assertThat(n.getDisableNotification()).isTrue();
        assertThat(n.getProtectContent()).isTrue();
        assertThat(n.getLinkPreviewDisabled()).isTrue();
    }

    @Test
    void aDeleteAndAMarkupEditNeedNoText() {
        Notification d = json.parse(1, "{\"id\":\"d\",\"bot_id\":\"alerts\",\"chat_id\":\"42\",\"kind\":\"meeting.cancelled\","
                + "\"delete_of\":\"standup-7\"}");
        assertThat(d.getDeleteOf()).isEqualTo("standup-7");
        assertThat(d.getText()).isEmpty();
        Notification e = json.parse(2, "{\"id\":\"e\",\"bot_id\":\"alerts\",\"chat_id\":\"42\",\"kind\":\"k\",\"edit_of\":\"standup-7\","
                + "\"edit_part\":\"reply_markup\",\"reply_markup\":[[{\"text\":\"Done\",\"callback_data\":\"done\"}]]}");
        assertThat(e.getEditPart()).isEqualTo(EditPart.REPLY_MARKUP);
        assertThat(e.getReplyMarkup().getRows().get(0).get(0).getText()).isEqualTo("Done");
    }

    @Test
    void badExtrasNameTheLineTheFieldAndTheValue() {
        assertThatThrownBy(() -> json.parse(3, "{\"id\":\"x\",\"bot_id\":\"alerts\",\"chat_id\":\"42\",\"kind\":\"k\",\"text\":\"t\","
                + "\"media\":{\"type\":\"sticker\",\"url\":\"https://x.example/s.webp\"}}"))
                .hasMessageContaining("line 3").hasMessageContaining("media.type").hasMessageContaining("'sticker'");
        assertThatThrownBy(() -> json.parse(4, "{\"id\":\"x\",\"bot_id\":\"alerts\",\"chat_id\":\"42\",\"kind\":\"k\",\"text\":\"t\","
                + "\"reply_markup\":[[{\"text\":\"Go\",\"callback_data\":\"" + "d".repeat(65) + "\"}]]}"))
                .hasMessageContaining("line 4").hasMessageContaining("reply_markup").hasMessageContaining("65 bytes");
        assertThatThrownBy(() -> json.parse(5, "{\"id\":\"x\",\"bot_id\":\"alerts\",\"chat_id\":\"42\",\"kind\":\"k\",\"text\":\"t\","
                + "\"reply_markup\":[[{\"text\":\"Go\",\"href\":\"https://x.example\"}]]}"))
                .hasMessageContaining("reply_markup.href").hasMessageContaining("unknown field");
        assertThatThrownBy(() -> json.parse(6, "{\"id\":\"x\",\"bot_id\":\"alerts\",\"chat_id\":\"42\",\"kind\":\"k\",\"text\":\"t\","
                + "\"disable_notification\":\"yes\"}")).hasMessageContaining("disable_notification").hasMessageContaining("true or false");
    }
}
