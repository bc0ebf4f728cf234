package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramCall;
import dev.sluice.testkit.FakeTelegramLimits;
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
        try (FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram().withGlobalPerSecond(100))) {
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

                long firstAccepted = telegram.accepted().stream().mapToLong(FakeTelegramAccepted::acceptedAtMillis)
                        .min().orElseThrow();
                long lastAccepted = telegram.accepted().stream().mapToLong(FakeTelegramAccepted::acceptedAtMillis)
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

    private static final String STORM_BOT = "storm";
    private static final String STORM_TOKEN = dev.sluice.testkit.FakeTokens.of("700000002");
    private static final String STORM_BOT_ID = FakeTelegram.botIdOf(STORM_TOKEN);

    /**
     * The end of chaos's {@code bot-429-storm} (BENCHMARKS.md, session 9: 11 x 429 for 10 injected). A bot-wide penalty
     * is inferred from two chats refused together and its gate written; when the gate lifts, the first call is refused
     * again (FakeTelegram's penalty runs once more, as when a call the senders did not see extended it). That 429 is
     * alone, so the sender files it for its chat; if nothing else stops the bot, its next call, to another chat, runs
     * into the provider's penalty: a 429 beyond the injected ones, a second over a limit. Every 429 here is injected
     * (3) when the budget keeps the bot out of the provider's penalty.
     */
    @Test
    void a_429_just_after_the_bot_gate_lifted_keeps_every_chat_of_the_bot_out_of_the_providers_penalty() throws Exception {
        String prefix = "stormend";
        SenderIt.topics(prefix, 3);
        int chats = 12;
        Duration retryAfter = Duration.ofSeconds(2);
        try (FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram())) {
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(),
                    Map.of(STORM_BOT, STORM_TOKEN));
            // slow enough that each 429 is answered and filed before the next grant (no call in flight meanwhile)
            s.put("budget.global.rate.per.s", "2");
            List<OutboundMessage> msgs = new ArrayList<>();
            for (int i = 0; i < chats; i++) {
                msgs.add(SenderIt.message("s" + i, STORM_BOT, Integer.toString(40_000 + i)).build());
            }
            // round 1: the first two calls (two chats) are refused bot-wide: the sender infers the bot's penalty
            telegram.enqueueForBot(STORM_BOT_ID, TelegramBehaviour.tooManyRequests(retryAfter), 2);
            try (SenderService sender = SenderIt.sender(s);
                 SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results")) {
                sender.start();
                SenderIt.produce(prefix + ".outbox.live", msgs);
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(2))
                        .until(() -> telegram.rejected429Count(STORM_BOT_ID) >= 2);
                // round 2, queued while the bot's gate (retry_after 2 s from the second 429) still holds every call:
                // the first call after it lifts is refused bot-wide once more
                telegram.enqueueForBot(STORM_BOT_ID, TelegramBehaviour.tooManyRequests(retryAfter), 1);
                assertThat(telegram.calls().stream().filter(c -> STORM_BOT_ID.equals(c.botId())).count())
                        .as("no call between the second 429 and queuing the third: %s", telegram.calls()).isEqualTo(2);

                Map<String, DeliveryResult> byId = results.awaitResults(chats, Duration.ofSeconds(60));
                assertThat(byId.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                List<FakeTelegramCall> refused = telegram.calls().stream()
                        .filter(c -> STORM_BOT_ID.equals(c.botId()) && c.status() == 429).toList();
                refused.forEach(c -> System.out.printf("429 at %d chat %s%n", c.atMillis(), c.chatId()));
                assertThat(refused).as("429s answered: the 3 injected, none for a call made during the provider's "
                        + "bot-wide penalty (by scope: %s)", telegram.rejected429ByScope()).hasSize(3);
                long last429 = refused.get(2).atMillis();
                assertThat(telegram.calls().stream().filter(c -> STORM_BOT_ID.equals(c.botId())
                        && c.atMillis() > last429 && c.atMillis() < last429 + retryAfter.toMillis()))
                        .as("calls during the penalty the third 429 opened").isEmpty();
            }
        }
    }

    private static final String PROBE_BOT = "probe";
    private static final String PROBE_TOKEN = dev.sluice.testkit.FakeTokens.of("700000003");
    private static final String PROBE_BOT_ID = FakeTelegram.botIdOf(PROBE_TOKEN);

    /**
     * Session 16's hole in chaos's {@code bot-429-storm}, at the rate and with the reservations of a real run (two
     * senders, 25/s, reservations on): when the bot's gate lifted, each sender took its lanes' next slots at once, and
     * when the first call was refused again, the calls already granted went out inside the renewed penalty (429s
     * nobody injected). With {@code budget.penalty.probe.window.ms} the first call after the lift goes alone.
     */
    @Test
    void when_the_bot_gate_lifts_one_probe_goes_alone_and_no_granted_call_lands_in_a_renewed_penalty() throws Exception {
        String prefix = "probe";
        SenderIt.topics(prefix, 3);
        int chats = 80;
        Duration retryAfter = Duration.ofSeconds(2);
        try (FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram())) {
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(),
                    Map.of(PROBE_BOT, PROBE_TOKEN));
            s.put("budget.global.rate.per.s", "25");
            Map<String, String> s2 = new java.util.LinkedHashMap<>(s);
            s2.put("sender.instance.id", prefix + "-group-2");
            List<OutboundMessage> msgs = new ArrayList<>();
            for (int i = 0; i < chats; i++) {
                msgs.add(SenderIt.message("p" + i, PROBE_BOT, Integer.toString(50_000 + i)).build());
            }
            telegram.enqueueForBot(PROBE_BOT_ID, TelegramBehaviour.tooManyRequests(retryAfter), 2);
            try (SenderService a = SenderIt.sender(s); SenderService b = SenderIt.sender(s2);
                 SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results")) {
                a.start();
                b.start();
                SenderIt.produce(prefix + ".outbox.live", msgs);
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(2))
                        .until(() -> telegram.rejected429Count(PROBE_BOT_ID) >= 2);
                // the bot's gate holds every call (calls granted before it may still land, refused by the penalty):
                // once the bot has been quiet for 300 ms, the first call after the lift is refused bot-wide once more
                await().atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(10)).until(() -> {
                    long last = telegram.calls().stream().filter(c -> PROBE_BOT_ID.equals(c.botId()))
                            .mapToLong(FakeTelegramCall::atMillis).max().orElseThrow();
                    return System.currentTimeMillis() - last >= 300;
                });
                long queuedAt = System.currentTimeMillis();
                telegram.enqueueForBot(PROBE_BOT_ID, TelegramBehaviour.tooManyRequests(retryAfter), 1);

                Map<String, DeliveryResult> byId = results.awaitResults(chats, Duration.ofSeconds(60));
                assertThat(byId.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                List<FakeTelegramCall> after = telegram.calls().stream()
                        .filter(c -> PROBE_BOT_ID.equals(c.botId()) && c.atMillis() >= queuedAt).toList();
                assertThat(after).as("calls after the lift").isNotEmpty();
                FakeTelegramCall probe = after.get(0);
                assertThat(probe.status()).as("the probe met the injected 429").isEqualTo(429);
                assertThat(after.stream().filter(c -> c.status() == 429))
                        .as("429s after the lift: the injected one only (by scope: %s)", telegram.rejected429ByScope())
                        .hasSize(1);
                assertThat(after.stream().filter(c -> c.atMillis() > probe.atMillis()
                        && c.atMillis() < probe.atMillis() + retryAfter.toMillis()))
                        .as("calls during the penalty the probe's 429 opened").isEmpty();
            }
        }
    }
}
