package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramCall;
import dev.sluice.testkit.FakeTokens;
import dev.sluice.testkit.TelegramBehaviour;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 16 (F5): a provider's wait is bounded by {@code sender.retry.after.max.ms}. Embedded broker, real
 * redis-server, FakeTelegram answering {@code retry_after} 2,147,483,647 s (68 years).
 */
class BoundedRetryAfterIT {
    private static final Duration YEARS = Duration.ofSeconds(2_147_483_647L);

    @Test
    void a_retry_after_of_68_years_writes_gates_of_at_most_the_default_cap_and_other_bots_keep_flowing() {
        String prefix = "bra-cap";
        String a = "braA";
        String b = "braB";
        String tokenA = FakeTokens.of("720000001");
        String tokenB = FakeTokens.of("720000002");
        SenderIt.topics(prefix, 2);
        try (FakeTelegram telegram = FakeTelegram.start();
             RedisClient client = RedisClient.create(SenderIt.redis().url());
             StatefulRedisConnection<String, String> redis = client.connect()) {
            telegram.enqueueForBot(tokenA, TelegramBehaviour.tooManyRequests(YEARS), 2);
            List<OutboundMessage> msgs = new ArrayList<>();
            msgs.add(SenderIt.message("a1", a, "801").build());
            msgs.add(SenderIt.message("a2", a, "802").build());
            for (int i = 0; i < 20; i++) {
                msgs.add(SenderIt.message("b" + i, b, Integer.toString(811 + i)).build());
            }
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(),
                    Map.of(a, tokenA, b, tokenB)); // sender.retry.after.max.ms at its default, 1 h
            try (SenderService sender = SenderIt.sender(s);
                 SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results")) {
                sender.start();
                SenderIt.produce(prefix + ".outbox.live", msgs);
                results.awaitUntil(r -> r.byId.keySet().stream().filter(id -> id.startsWith("b")).count() == 20,
                        Duration.ofSeconds(30));
                assertThat(results.byId.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                assertThat(telegram.rejected429Count(tokenB)).as("bot B never refused").isZero();
                assertThat(telegram.callsFor("801")).extracting(FakeTelegramCall::status).containsExactly(429);

                // Every gate of bot A lifts within the cap, and the keys live about that long: the chat gates' keys at
                // most the cap; the bot's key ("TAT|gate|AIMD multiplier|since|backfill TAT") also keeps the AIMD
                // multiplier until it has climbed back after the gate (0.5 -> 1 at 0.05/s: 10 s), so cap + 10 s.
                long cap = Duration.ofHours(1).toMillis();
                List<String> keys = redis.sync().keys("sluice:{" + a + "}:*");
                assertThat(keys).isNotEmpty();
                List<String> time = redis.sync().time();
                long redisNowMs = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
                long longestGate = 0;
                for (String k : keys) {
                    if (k.endsWith("}:limits")) {
                        continue; // the senders' published limits (a hash, SharedLimitsCheck): no gate, a 90 s field life
                    }
                    long ttl = redis.sync().pttl(k);
                    String value = redis.sync().get(k);
                    System.out.printf("%s PTTL %d ms value %s%n", k, ttl, value);
                    if (ttl == -2 || value == null) {
                        // expired since KEYS listed it (recent429 lives 1 s): it lived less than the cap
                        continue;
                    }
                    if (k.contains("}:sent:")) {
                        // not a gate: the idempotency key its grant wrote (issue 19: the in-flight mark rides on the
                        // budget call), kept as long as any sent mark (sender.sent.mark.ttl.ms, 14 days)
                        assertThat(value).as("mark of %s", k).startsWith("FLIGHT|");
                        assertThat(ttl).as("PTTL of %s", k).isBetween(1L, Duration.ofDays(14).toMillis());
                        continue;
                    }
                    boolean botKey = k.endsWith("}:bot");
                    assertThat(ttl).as("PTTL of %s", k).isBetween(1L, botKey ? cap + 10_000 : cap);
                    if (botKey || k.contains("}:chat:")) {
                        String gate = value.split("\\|", -1)[1];
                        if (!gate.isEmpty()) {
                            long gateInMs = Long.parseLong(gate) / 1000 - redisNowMs;
                            assertThat(gateInMs).as("gate of %s lifts within the cap", k).isLessThanOrEqualTo(cap);
                            longestGate = Math.max(longestGate, gateInMs);
                        }
                    }
                }
                assertThat(longestGate).as("a gate of about the 1 h cap was written").isGreaterThan(Duration.ofMinutes(55).toMillis());
                assertThat(results.byId).doesNotContainKeys("a1", "a2"); // they wait (at most the cap), no result yet
            }
        }
    }

    @Test
    void a_longer_wait_asks_again_at_the_cap_and_delivers_once_the_provider_admits() {
        String prefix = "bra-recheck";
        String bot = "braR";
        String token = FakeTokens.of("720000003");
        SenderIt.topics(prefix, 1);
        try (FakeTelegram telegram = FakeTelegram.start()) {
            // one 429 of 68 years; the fake keeps refusing the chat (its own penalty) until reset
            telegram.enqueueForChat(token, "860", TelegramBehaviour.tooManyRequests(YEARS), 1);
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(), Map.of(bot, token));
            s.put("sender.retry.after.max.ms", "2000");
            try (SenderService sender = SenderIt.sender(s);
                 SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results")) {
                sender.start();
                SenderIt.produce(prefix + ".outbox.live", List.of(SenderIt.message("r1", bot, "860").build()));
                await().atMost(Duration.ofSeconds(20)).until(() -> telegram.callsFor("860").size() >= 3);
                List<FakeTelegramCall> calls = telegram.callsFor("860");
                assertThat(calls).extracting(FakeTelegramCall::status).startsWith(429, 429, 429);
                for (int i = 1; i < 3; i++) {
                    long gap = calls.get(i).atMillis() - calls.get(i - 1).atMillis();
                    System.out.printf("re-check %d after %d ms%n", i, gap);
                    // the capped wait (2 s) plus at most the one-sided jitter (250 ms) and scheduling slack
                    assertThat(gap).isBetween(1_950L, 4_000L);
                }
                results.poll(Duration.ofMillis(200));
                assertThat(results.byId).as("still waiting, not ended").isEmpty();
                telegram.reset(); // the provider lifts its penalty
                Map<String, DeliveryResult> byId = results.awaitResults(1, Duration.ofSeconds(15));
                assertThat(byId.get("r1").getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
                assertThat(telegram.acceptedFor("860")).hasSize(1);
            }
        }
    }
}
