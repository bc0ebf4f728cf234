package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTokens;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 16: {@code bot.<id>.paid.broadcast=true} raises the bot's budget to the paid rate AND sends
 * {@code allow_paid_broadcast=true}, without which Telegram (and FakeTelegram, which allows more than 30/s only to
 * requests carrying the flag) answers the extra messages with 429s.
 */
class PaidBroadcastIT {

    @Test
    void a_paid_broadcast_bot_sends_above_30_per_second_with_the_flag_and_no_429() {
        String prefix = "paid";
        String bot = "paid";
        String token = FakeTokens.of("723000001");
        SenderIt.topics(prefix, 3);
        try (FakeTelegram telegram = FakeTelegram.start()) { // Telegram's limits: 30/s per bot without the flag
            List<OutboundMessage> msgs = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                msgs.add(SenderIt.message("p" + i, bot, Integer.toString(10_000 + i)).build());
            }
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(), Map.of(bot, token));
            s.put("bot." + bot + ".paid.broadcast", "true");
            s.put("sender.max.in.flight", "32");
            s.put("sender.max.in.flight.per.bot", "32");
            try (SenderService sender = SenderIt.sender(s);
                 SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results")) {
                sender.start();
                SenderIt.produce(prefix + ".outbox.live", msgs);
                Map<String, DeliveryResult> byId = results.awaitResults(msgs.size(), Duration.ofSeconds(60));
                assertThat(byId.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                int maxPerSecond = telegram.maxBotMessagesPer(Duration.ofSeconds(1));
                System.out.printf("paid broadcast: 300 messages, at most %d in any second, %d carried the flag, %d x 429%n",
                        maxPerSecond, telegram.paidBroadcastRequests(token), telegram.rejected429Count());
                assertThat(telegram.paidBroadcastRequests(token)).as("every send carried allow_paid_broadcast").isEqualTo(300);
                assertThat(maxPerSecond).as("above the unpaid 30/s").isGreaterThan(30);
                assertThat(telegram.rejected429Count()).isZero();
            }
        }
    }
}
