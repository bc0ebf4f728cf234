package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramCall;
import dev.sluice.testkit.FakeTokens;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 16: the sender's chat marks are per (bot, chat) and dated. Bot A is blocked by a chat (403): A's messages to
 * it released before the 403 end SKIPPED_INACTIVE without a call, bot B still delivers to the chat, and a message of
 * A released after the 403 (what the topology releases once a chat.events ACTIVE made the chat active for A again)
 * is called and delivered by the same sender, without a restart. Chat ids are normalised: {@code " 900"} is
 * {@code "900"}.
 */
class ChatStatusPerBotIT {

    @Test
    void a_chat_that_blocked_bot_a_still_gets_bot_b_and_gets_a_again_for_a_message_released_later() {
        String prefix = "cspb";
        String a = "cspA";
        String b = "cspB";
        String tokenA = FakeTokens.of("724000001");
        String tokenB = FakeTokens.of("724000002");
        SenderIt.topics(prefix, 1);
        try (FakeTelegram telegram = FakeTelegram.start()) {
            telegram.blockChat(tokenA, "900");
            Instant released = Instant.now();
            List<OutboundMessage> first = List.of(
                    SenderIt.message("a1", a, "900").setDueAt(released).build(),
                    SenderIt.message("a2", a, " 900").setDueAt(released).build(), // same chat, normalised
                    SenderIt.message("b1", b, "900").setDueAt(released).build());
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(),
                    Map.of(a, tokenA, b, tokenB));
            try (SenderService sender = SenderIt.sender(s);
                 SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results")) {
                sender.start();
                SenderIt.produce(prefix + ".outbox.live", first);
                Map<String, DeliveryResult> byId = results.awaitResults(3, Duration.ofSeconds(30));
                assertThat(byId.get("a1").getStatus()).isEqualTo(DeliveryStatus.BLOCKED);
                assertThat(byId.get("a2").getStatus()).isEqualTo(DeliveryStatus.SKIPPED_INACTIVE);
                assertThat(byId.get("a2").getAttempts()).isZero();
                assertThat(byId.get("a2").getChatId()).isEqualTo("900");
                assertThat(byId.get("b1").getStatus()).as("bot B is not blocked by the chat").isEqualTo(DeliveryStatus.DELIVERED);

                // the user writes to bot A again (chat.events ACTIVE): the topology releases A's next message now
                telegram.unblockChat(tokenA, "900");
                SenderIt.produce(prefix + ".outbox.live", List.of(
                        SenderIt.message("a3", a, "900").setDueAt(Instant.now()).build()));
                byId = results.awaitResults(4, Duration.ofSeconds(30));
                assertThat(byId.get("a3").getStatus()).as("delivered by the same sender, no restart")
                        .isEqualTo(DeliveryStatus.DELIVERED);
                assertThat(telegram.callsFor("900")).extracting(FakeTelegramCall::botId, FakeTelegramCall::status)
                        .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("724000001", 403),
                                org.assertj.core.groups.Tuple.tuple("724000002", 200),
                                org.assertj.core.groups.Tuple.tuple("724000001", 200));
            }
        }
    }
}
