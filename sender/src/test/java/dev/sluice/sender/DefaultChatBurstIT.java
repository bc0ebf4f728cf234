package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTokens;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 16: defaults never cost a 429 on their own. 12 CRITICAL messages to one chat through the default budget
 * configuration (no {@code budget.*} key set) reach FakeTelegram at Telegram's limits (1/s per chat, burst 3) with
 * 0 x 429: the default chat burst is 2, one below what the provider tolerates, which absorbs arrival jitter.
 */
class DefaultChatBurstIT {

    @Test
    void twelve_critical_messages_to_one_chat_with_the_default_configuration_get_no_429() {
        String prefix = "dcb";
        String bot = "dcb";
        String token = FakeTokens.of("721000001");
        SenderIt.topics(prefix, 1);
        try (FakeTelegram telegram = FakeTelegram.start()) {
            List<OutboundMessage> msgs = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                msgs.add(SenderIt.message("c" + i, bot, "870").setEventClass(NotificationClass.CRITICAL).build());
            }
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(), Map.of(bot, token));
            assertThat(s.keySet()).noneMatch(k -> k.startsWith("budget."));
            try (SenderService sender = SenderIt.sender(s);
                 SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results")) {
                sender.start();
                SenderIt.produce(prefix + ".outbox.live", msgs);
                Map<String, DeliveryResult> byId = results.awaitResults(12, Duration.ofSeconds(40));
                assertThat(byId.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                assertThat(telegram.acceptedFor("870")).extracting(FakeTelegramAccepted::text)
                        .containsExactly(msgs.stream().map(OutboundMessage::getText).toArray(String[]::new));
                System.out.printf("12 CRITICAL to one chat: %d calls, %d x 429%n", telegram.callsFor("870").size(),
                        telegram.rejected429Count());
                assertThat(telegram.rejected429Count()).isZero();
            }
        }
    }
}
