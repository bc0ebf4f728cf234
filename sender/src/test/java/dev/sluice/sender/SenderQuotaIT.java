package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sluice.avro.OutboundMessage;
import dev.sluice.metrics.SluiceMetrics;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.PostgresInstance;
import dev.sluice.testkit.PostgresLauncher;
import io.micrometer.core.instrument.Counter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Quota mode in the pipeline: two real SenderServices (embedded Kafka, redis-server) configured with
 * {@code quota.jdbc.url} and a contractual quota of 12 messages for their bot share it through a real
 * PostgreSQL server: of 30 messages to 30 chats exactly 12 reach the provider, the others are refused by
 * the quota (counted as {@code sluice.budget.refusals{limit=quota}}) and wait for the next window instead of
 * being sent. Skipped with the reason when the PostgreSQL binaries are not installed.
 */
class SenderQuotaIT {
    private static final String BOT = "contract";
    private static final String TOKEN = "751000002:" + "quota-test-token";
    private static final int QUOTA = 12;
    private static final int MESSAGES = 30;

    @Test
    void two_senders_in_quota_mode_deliver_exactly_the_quota() throws Exception {
        PostgresLauncher.unavailableReason().ifPresent(reason -> assumeTrue(false, reason));
        String prefix = "quota-senders";
        SenderIt.topics(prefix, 3);
        try (PostgresInstance pg = PostgresLauncher.start(); FakeTelegram telegram = FakeTelegram.start()) {
            Map<String, String> settings = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(), Map.of(BOT, TOKEN));
            settings.put("quota.jdbc.url", pg.jdbcUrl());
            settings.put("quota.jdbc.user", PostgresInstance.USER);
            settings.put("quota." + BOT + ".limit", Integer.toString(QUOTA));
            // a 100-day window: the run cannot straddle a window boundary (that would allow 2 x quota)
            settings.put("quota." + BOT + ".window.ms", Long.toString(Duration.ofDays(100).toMillis()));
            settings.put("quota.lease.size", "5");
            List<SenderService> senders = new ArrayList<>();
            try {
                for (int i = 1; i <= 2; i++) {
                    Map<String, String> s = new LinkedHashMap<>(settings);
                    s.put("sender.instance.id", prefix + "-" + i);
                    SenderService sender = SenderIt.sender(s);
                    senders.add(sender);
                    sender.start();
                }
                List<OutboundMessage> messages = new ArrayList<>();
                for (int c = 0; c < MESSAGES; c++) {
                    String chat = Integer.toString(300_000 + c);
                    messages.add(SenderIt.message("q-" + chat, BOT, chat).build());
                }
                SenderIt.produce(prefix + ".outbox.live", messages);

                // every message was decided: QUOTA sent, the rest refused by the quota (each lane asks once,
                // then waits for the window to end)
                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() ->
                        telegram.accepted().size() >= QUOTA && quotaRefusals(senders) >= MESSAGES - QUOTA);
                assertThat(telegram.accepted()).as("messages the provider accepted").hasSize(QUOTA);
                assertThat(telegram.rejected429Count()).isZero();
                System.out.printf("SenderQuotaIT: %d of %d messages delivered under a quota of %d; %.0f quota refusals%n",
                        telegram.accepted().size(), MESSAGES, QUOTA, quotaRefusals(senders));
            } finally {
                senders.forEach(SenderService::close);
            }
        }
    }

    private static double quotaRefusals(List<SenderService> senders) {
        return senders.stream().mapToDouble(s -> s.registry().find(SluiceMetrics.BUDGET_REFUSALS)
                .tag(SluiceMetrics.TAG_LIMIT, "quota").counters().stream().mapToDouble(Counter::count).sum()).sum();
    }
}
