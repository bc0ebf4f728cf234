package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.metrics.SluiceMetrics;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTokens;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 16 (F10): a revoked token parks the bot. FakeTelegram accepts only the right token and answers 401 to the
 * wrong one. With the wrong token no message ends FAILED (they wait; one with a deadline ends EXPIRED at it), the
 * bot is reported (readiness input, gauge {@code sluice_bot_token_rejected}) and only a few calls are made (the
 * first ones in flight, then one re-check per period). After a restart with the right token all are delivered.
 */
class RevokedTokenIT {

    @Test
    void a_wrong_token_fails_nothing_and_the_right_token_after_a_restart_delivers_everything() {
        String prefix = "rvk";
        String bot = "rvk";
        String right = FakeTokens.of("722000001");
        String wrong = FakeTokens.of("722000001", "wrong");
        SenderIt.topics(prefix, 2);
        try (FakeTelegram telegram = FakeTelegram.builder().requireToken(right).start()) {
            List<OutboundMessage> msgs = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                msgs.add(SenderIt.message("m" + i, bot, Integer.toString(880 + i % 6)).build());
            }
            msgs.add(SenderIt.message("deadline", bot, "890").setExpiresAt(Instant.now().plusSeconds(3)).build());
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(), Map.of(bot, wrong));
            s.put("sender.token.recheck.ms", "1000");
            try (SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results")) {
                try (SenderService sender = SenderIt.sender(s)) {
                    sender.start();
                    SenderIt.produce(prefix + ".outbox.live", msgs);
                    await().atMost(Duration.ofSeconds(20)).until(() -> sender.tokenRejectedBots().contains(bot));
                    assertThat(sender.registry().get(SluiceMetrics.BOT_TOKEN_REJECTED)
                            .tag(SluiceMetrics.TAG_BOT, bot).gauge().value()).isEqualTo(1.0);
                    // the message with a deadline ends EXPIRED at it; nothing else ends
                    results.awaitUntil(r -> r.byId.containsKey("deadline"), Duration.ofSeconds(15));
                    long firstCalls = telegram.responseCount(401);
                    // three more re-check periods: at most one call each (plus the calls in flight at the first 401)
                    long t0 = System.currentTimeMillis();
                    await().atMost(Duration.ofSeconds(10)).until(() -> System.currentTimeMillis() - t0 >= 3_000
                            && telegram.responseCount(401) > firstCalls);
                    results.poll(Duration.ofMillis(300));
                    System.out.printf("wrong token: %d calls answered 401 over %d ms, results %s%n",
                            telegram.responseCount(401), System.currentTimeMillis() - t0, results.byId.keySet());
                    assertThat(results.all).extracting(DeliveryResult::getStatus).containsExactly(DeliveryStatus.EXPIRED);
                    assertThat(results.byId.get("deadline").getReason()).contains("expires_at");
                    assertThat(telegram.responseCount(401)).as("parked: no call per message")
                            .isLessThanOrEqualTo(firstCalls + 5);
                    assertThat(telegram.accepted()).isEmpty();
                }
                s.put("bot." + bot + ".token", right);
                s.put("sender.instance.id", prefix + "-group-2");
                try (SenderService sender = SenderIt.sender(s)) {
                    sender.start();
                    results.awaitResults(msgs.size(), Duration.ofSeconds(40));
                    assertThat(sender.tokenRejectedBots()).isEmpty();
                }
                assertThat(results.all).as("one result each").hasSize(msgs.size());
                assertThat(results.all).noneMatch(r -> r.getStatus() == DeliveryStatus.FAILED);
                assertThat(results.all).filteredOn(r -> r.getStatus() == DeliveryStatus.DELIVERED).hasSize(30);
                assertThat(telegram.accepted()).hasSize(30);
            }
        }
    }
}
