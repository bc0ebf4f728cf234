package dev.sluice.app.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.app.tools.ChatEventCommand;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.sender.SenderService;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramCall;
import dev.sluice.testkit.FakeTokens;
import dev.sluice.topology.TopologyService;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Issue 16 "done when": chat status per (bot, chat), through the real topology, one running sender and FakeTelegram.
 * Bot {@code alerts} is blocked by chat 42 (403: BLOCKED); bot {@code news} still delivers to it; then
 * {@code sluice chat-event ACTIVE --bot alerts --chat 42} (the user wrote to the bot again) and alerts delivers to the
 * chat again, with no process restarted. Before issue 16 the sender kept its 403 per chat for all bots until restart.
 */
class ChatStatusEndToEndIT {
    private static final String ALERTS = FakeTokens.of("725000001");
    private static final String NEWS = FakeTokens.of("725000002");

    @Test
    void aChatThatBlockedOneBotStillGetsTheOtherAndGetsTheFirstAgainAfterActive(@TempDir Path dir) throws Exception {
        try (EndToEndHarness e2e = EndToEndHarness.start("chat-status-it", dir)) {
            FakeTelegram telegram = e2e.telegram;
            telegram.blockChat(ALERTS, "42");
            try (TopologyService topology = e2e.topology(Map.of("kafka.max.task.idle.ms", "0"));
                 SenderService sender = EndToEndHarness.sender(e2e.senderSettings().with("sender.instance.id", "sender-1")
                         .with("bot.alerts.token", ALERTS).with("bot.news.token", NEWS))) {
                topology.start();
                sender.start();

                e2e.produce(line("a-1", "alerts"));
                assertThat(e2e.awaitResult("a-1").getStatus()).isEqualTo(DeliveryStatus.BLOCKED);

                e2e.produce(line("n-1", "news"), line("a-2", "alerts"));
                assertThat(e2e.awaitResult("n-1").getStatus()).as("bot news is not blocked by chat 42")
                        .isEqualTo(DeliveryStatus.DELIVERED);
                assertThat(e2e.awaitResult("a-2").getStatus()).as("alerts is still blocked")
                        .isIn(DeliveryStatus.SKIPPED_INACTIVE, DeliveryStatus.BLOCKED);

                // The user writes to bot alerts again: its backend writes ACTIVE, the chat unblocks alerts at Telegram.
                telegram.unblockChat(ALERTS, "42");
                assertThat(new CommandLine(new ChatEventCommand()).setCaseInsensitiveEnumValuesAllowed(true).execute(
                        Stream.concat(Stream.of("ACTIVE", "--bot", "alerts", "--chat", "42"), Stream.of(e2e.connect()))
                                .toArray(String[]::new))).isZero();
                // The topology applies the event in its own time (another topic): a notification it routes before that is
                // skipped by the topology itself, never by the sender; one routed after it is delivered. Bounded tries.
                DeliveryResult last = null;
                for (int i = 3; i <= 8 && (last == null || last.getStatus() != DeliveryStatus.DELIVERED); i++) {
                    e2e.produce(line("a-" + i, "alerts"));
                    last = e2e.awaitResult("a-" + i);
                    if (last.getStatus() != DeliveryStatus.DELIVERED) {
                        assertThat(last.getSenderInstance()).as("only the topology may still skip: " + last).isEqualTo("topology");
                    }
                }
                assertThat(last.getStatus()).as("alerts delivers to chat 42 again, no restart").isEqualTo(DeliveryStatus.DELIVERED);
                assertThat(last.getBotId()).isEqualTo("alerts");
            }
            assertThat(telegram.callsFor("42")).extracting(FakeTelegramCall::status).filteredOn(s -> s == 200).hasSize(2);
        }
    }

    private static String line(String id, String bot) {
        return "{\"id\":\"" + id + "\",\"bot_id\":\"" + bot + "\",\"chat_id\":\"42\",\"kind\":\"reminder\",\"event_class\":\"CRITICAL\","
                + "\"text\":\"" + bot + " " + id + "\"}";
    }
}
