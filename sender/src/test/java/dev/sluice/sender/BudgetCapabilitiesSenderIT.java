package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.PostgresInstance;
import dev.sluice.testkit.PostgresLauncher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Finding F7 through the real sender (embedded broker, redis-server, PostgreSQL, FakeTelegram): a sender with an
 * HTTP provider configured and in quota mode, sending for a Telegram bot with reservations on, still decides a
 * bot's waiting lanes in batches of reserved slots (fewer budget round trips than messages) and reads the sent
 * marks inside the budget's script (no separate mark reads), with no 429. Before the fix the wrapped budget
 * reported no reservations, no sent-mark URL and 0 round trips.
 */
class BudgetCapabilitiesSenderIT {
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456789");
    private static final String BOT = "tgcap";
    private static final int MESSAGES = 60;
    private static FakeTelegram telegram;
    private static PostgresInstance pg;

    @BeforeAll
    static void start() {
        PostgresLauncher.unavailableReason().ifPresent(reason -> assumeTrue(false, reason));
        pg = PostgresLauncher.start();
        telegram = FakeTelegram.start(FakeTelegramLimits.telegram());
    }

    @AfterAll
    static void stop() {
        if (telegram != null) {
            telegram.close();
        }
        if (pg != null) {
            pg.close();
        }
    }

    @Test
    void a_telegram_bot_keeps_reservations_and_folded_mark_checks_beside_a_provider_and_a_quota() {
        String prefix = "capabilities";
        SenderIt.topics(prefix, 2);
        Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(),
                Map.of(BOT, TOKEN, "sms", "sms-api-key"));
        // an HTTP provider that is never sent to, and quota mode with a quota on the Telegram bot
        s.put("provider.sms.url.template", "https://example.invalid/v1/messages");
        s.put("provider.sms.rate.per.s", "5");
        s.put("quota.jdbc.url", pg.jdbcUrl());
        s.put("quota.jdbc.user", PostgresInstance.USER);
        s.put("quota." + BOT + ".limit", "100000");
        s.put("budget.global.rate.per.s", "25");
        s.put("budget.reservation.max.ms", "500");
        s.put("budget.arrival.guard.limit.per.s", "30");
        List<OutboundMessage> msgs = new ArrayList<>();
        for (int i = 0; i < MESSAGES; i++) {
            msgs.add(SenderIt.message("cap-" + i, BOT, Integer.toString(5_000 + i)).build());
        }
        try (SenderService sender = SenderIt.sender(s);
             SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results")) {
            sender.start();
            SenderIt.produce(prefix + ".outbox.live", msgs);
            Map<String, DeliveryResult> byId = results.awaitResults(MESSAGES, Duration.ofSeconds(60));

            assertThat(results.all).as("one result per message").hasSize(MESSAGES);
            assertThat(byId.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
            Set<String> unique = new HashSet<>();
            telegram.accepted().forEach(a -> unique.add(a.text()));
            assertThat(telegram.accepted()).as("each accepted once").hasSize(MESSAGES);
            assertThat(unique).hasSize(MESSAGES);
            assertThat(telegram.rejected429Count()).isZero();

            double budgetTrips = roundTrips(sender, "budget");
            System.out.printf("capabilities: %d delivered, %.0f budget round trips, %.0f separate mark reads%n",
                    MESSAGES, budgetTrips, roundTrips(sender, "sent_marks_read"));
            assertThat(budgetTrips).as("the round-trip metric reads the Redis budget under the wrappers").isPositive();
            assertThat(budgetTrips).as("reservations: waiting lanes are decided in batches").isLessThan(MESSAGES);
            assertThat(roundTrips(sender, "sent_marks_read")).as("sent marks read inside the budget's script")
                    .isZero();
        }
    }

    private static double roundTrips(SenderService sender, String client) {
        return sender.registry().find(SenderService.REDIS_ROUND_TRIPS).tag("client", client).functionCounter().count();
    }
}
