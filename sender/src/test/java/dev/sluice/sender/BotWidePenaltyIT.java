package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.TelegramBehaviour;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The stall seen in the demo: FakeTelegram (like Telegram) opens a bot-wide penalty and extends it on every
 * call made during it. 300 chats of the bot are waiting. The sender must infer the bot-wide scope from
 * several chats refused together, stop calling the bot until the penalty lifts, and recover.
 */
class BotWidePenaltyIT {
    private static final String BOT = "stall";
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("700000001");

    @Test
    void a_bot_wide_429_stops_every_chat_of_the_bot_until_it_lifts_and_the_bot_recovers() throws Exception {
        String prefix = "botwide";
        SenderIt.topics(prefix, 3);
        int chats = 300;
        Duration retryAfter = Duration.ofSeconds(3);
        try (FakeTelegram telegram = FakeTelegram.start(FakeTelegram.Limits.telegram().withGlobalPerSecond(100))) {
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(), Map.of(BOT, TOKEN));
            s.put("budget.global.rate.per.s", "100");
            s.put("sender.max.in.flight", "16");
            List<OutboundMessage> msgs = new ArrayList<>();
            for (int i = 0; i < chats; i++) {
                msgs.add(SenderIt.message("w" + i, BOT, Integer.toString(30_000 + i)).build());
            }
            // the first call of the bot (whatever the chat) opens a bot-wide penalty of 3 s
            telegram.enqueueForBot(BOT_ID, TelegramBehaviour.tooManyRequests(retryAfter), 1);
            try (SenderService sender = SenderIt.sender(s);
                 SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results")) {
                sender.start();
                SenderIt.produce(prefix + ".outbox.live", msgs);
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(2))
                        .until(() -> telegram.rejected429Count(BOT_ID) > 0);
                long first429 = System.currentTimeMillis(); // observed within a few ms of the answer
                Map<String, DeliveryResult> byId = results.awaitResults(chats, Duration.ofSeconds(40));
                assertThat(results.all).as("one result per message").hasSize(chats);
                assertThat(byId.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);

                long firstAccepted = telegram.accepted().stream().mapToLong(FakeTelegram.Accepted::acceptedAtMillis)
                        .min().orElseThrow();
                long lastAccepted = telegram.accepted().stream().mapToLong(FakeTelegram.Accepted::acceptedAtMillis)
                        .max().orElseThrow();
                long rejected = telegram.rejected429Count(BOT_ID);
                System.out.printf("bot-wide penalty: %d 429s, first delivery %d ms after the first 429, all %d delivered "
                        + "%d ms after it%n", rejected, firstAccepted - first429, chats, lastAccepted - first429);
                // bounded: the forced 429 plus the calls already in flight when the second chat was refused
                assertThat(rejected).as("429s answered").isLessThanOrEqualTo(1 + 16 + 2);
                // recovery: nothing before the penalty, then the first delivery within retry_after + a few s
                assertThat(firstAccepted - first429).isGreaterThanOrEqualTo(retryAfter.toMillis() - 50);
                assertThat(firstAccepted - first429).isLessThan(retryAfter.toMillis() + 4_000);
                // then the 300 chats drain at the bot's rate (100/s here): a few seconds, not a stall
                assertThat(lastAccepted - firstAccepted).isLessThan(8_000);
            }
        }
    }

    private static final String BOT_ID = FakeTelegram.botIdOf(TOKEN);
}
