package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.TelegramBehaviour;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * A pool of three bots with one under a 60 s bot-wide penalty (FakeTelegram extends it on every call made
 * during it): every message is delivered within the other two bots' budgets and none goes through the
 * penalised bot; its 429s stay bounded by the calls that were in flight when the penalty was discovered.
 */
class BotPoolIT {
    private static final Map<String, String> TOKENS = Map.of(
            "pool1", dev.sluice.testkit.FakeTokens.of("730000001"),
            "pool2", dev.sluice.testkit.FakeTokens.of("730000002"),
            "pool3", dev.sluice.testkit.FakeTokens.of("730000003"));
    private static final int IN_FLIGHT_PER_BOT = 4;

    @Test
    void a_pool_routes_around_a_bot_under_a_60_s_penalty_within_the_other_bots_budgets() {
        String prefix = "pool";
        SenderIt.topics(prefix, 3);
        try (FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram().withGlobalPerSecond(25))) {
            String penalised = FakeTelegram.botIdOf(TOKENS.get("pool1"));
            telegram.enqueueForBot(penalised, TelegramBehaviour.tooManyRequests(Duration.ofSeconds(60)), 1);
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(), TOKENS);
            s.put("budget.global.rate.per.s", "20");
            // the arrival guard keeps arrival jitter (a late answer) from putting 22 calls into the provider's second
            s.put("budget.arrival.guard.limit.per.s", "21");
            s.put("sender.max.in.flight.per.bot", Integer.toString(IN_FLIGHT_PER_BOT));
            List<OutboundMessage> msgs = new ArrayList<>();
            for (int i = 0; i < 160; i++) {
                msgs.add(SenderIt.message("p" + i, "pool1", Integer.toString(50_000 + i))
                        .setBotPool(List.of("pool1", "pool2", "pool3")).build());
            }
            long start = System.currentTimeMillis();
            try (SenderService sender = SenderIt.sender(s);
                 SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results")) {
                sender.start();
                SenderIt.produce(prefix + ".outbox.live", msgs);
                Map<String, DeliveryResult> byId;
                try {
                    byId = results.awaitResults(msgs.size(), Duration.ofSeconds(40));
                } catch (org.awaitility.core.ConditionTimeoutException e) {
                    for (OutboundMessage m : msgs) {
                        if (!results.byId.containsKey(m.getId())) {
                            System.out.println("MISSING " + m.getId() + " calls " + telegram.callsFor(m.getChatId()));
                        }
                    }
                    throw e;
                }
                long tookMs = System.currentTimeMillis() - start;
                assertThat(results.all).hasSize(msgs.size());
                assertThat(byId.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                Map<String, Long> byBot = byId.values().stream()
                        .collect(Collectors.groupingBy(DeliveryResult::getBotId, Collectors.counting()));
                long rejected = telegram.rejected429Count(penalised);
                System.out.printf("pool: %s in %d ms, the penalised bot got %d calls (all 429)%n", byBot, tookMs,
                        rejected);
                assertThat(byBot).doesNotContainKey("pool1").containsKeys("pool2", "pool3");
                assertThat(telegram.accepted()).noneMatch(a -> a.botId().equals(penalised));
                assertThat(tookMs).as("all inside the 60 s penalty").isLessThan(60_000);
                assertThat(rejected).as("calls into the penalty").isLessThanOrEqualTo(1 + IN_FLIGHT_PER_BOT + 1);
                // within the other two bots' budgets: never more than rate + burst in any second, no 429 for them
                assertThat(telegram.maxBotMessagesPer(Duration.ofSeconds(1))).isLessThanOrEqualTo(21);
                assertThat(telegram.rejected429Count()).isEqualTo(rejected);
            }
        }
    }
}
