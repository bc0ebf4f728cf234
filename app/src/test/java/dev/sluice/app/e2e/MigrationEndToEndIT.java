package dev.sluice.app.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.config.Settings;
import dev.sluice.sender.SenderService;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramCall;
import dev.sluice.testkit.FakeTokens;
import dev.sluice.testkit.TelegramBehaviour;
import dev.sluice.topology.TopologyService;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 16 "done when" (F11): a migration learned from a 400 {@code migrate_to_chat_id}, the sender restarted, then
 * a notification to the old id: one call to the new id, none to the old. The sender writes the migration's result
 * under the OLD chat id (key and {@code chat_id}, {@code migrated_to_chat_id} = new), where the topology routes
 * notifications to the old id, so the topology re-addresses them durably; the restarted sender's own memory is
 * empty. Before issue 16 the result named the new id, the topology learned nothing for the old id, and every
 * sender restart paid one more 400 per lane.
 */
class MigrationEndToEndIT {
    private static final String ALERTS = FakeTokens.of("726000001");

    @Test
    void aMigrationLearnedFromA400ReAddressesTheOldIdAfterASenderRestart(@TempDir Path dir) throws Exception {
        try (EndToEndHarness e2e = EndToEndHarness.start("migration-it", dir)) {
            FakeTelegram telegram = e2e.telegram;
            // the group became a supergroup: every call to the old id answers 400 with migrate_to_chat_id
            telegram.enqueueForChat(ALERTS, "-700", TelegramBehaviour.migrateTo(-100700L), 100);
            Settings senderSettings = e2e.senderSettings().with("bot.alerts.token", ALERTS);
            try (TopologyService topology = e2e.topology(Map.of("kafka.max.task.idle.ms", "0"))) {
                topology.start();
                try (SenderService sender = EndToEndHarness.sender(senderSettings.with("sender.instance.id", "sender-1"))) {
                    sender.start();
                    e2e.produce(line("g-1", "-700"));
                    DeliveryResult first = e2e.awaitResult("g-1");
                    assertThat(first.getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
                    assertThat(first.getChatId()).as("the old id").isEqualTo("-700");
                    assertThat(first.getMigratedToChatId()).isEqualTo("-100700");
                }
                assertThat(telegram.callsFor("-700")).extracting(FakeTelegramCall::status).containsExactly(400);
                try (SenderService sender = EndToEndHarness.sender(senderSettings.with("sender.instance.id", "sender-2"))) {
                    sender.start();
                    e2e.produce(line("g-2", "-700"));
                    DeliveryResult second = e2e.awaitResult("g-2");
                    assertThat(second.getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
                    assertThat(second.getSenderInstance()).isEqualTo("sender-2");
                }
            }
            assertThat(telegram.callsFor("-700")).as("no second call to the old id").extracting(FakeTelegramCall::status)
                    .containsExactly(400);
            assertThat(telegram.acceptedFor("-100700")).extracting(FakeTelegramAccepted::text)
                    .containsExactly("alerts g-1", "alerts g-2");
        }
    }

    private static String line(String id, String chat) {
        return "{\"id\":\"" + id + "\",\"bot_id\":\"alerts\",\"chat_id\":\"" + chat + "\",\"kind\":\"reminder\","
                + "\"event_class\":\"CRITICAL\",\"text\":\"alerts " + id + "\"}";
    }
}
