package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.config.Settings;
import dev.sluice.metrics.BudgetState;
import dev.sluice.sender.budget.LettuceResources;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 4's outage test: redis-server is stopped in the middle of a run of 3 real {@link SenderService}
 * instances (production wiring: ResilientBudget and RedisSentMarks on that redis-server, one consumer group on
 * the embedded broker) sending one bot's backlog to FakeTelegram, and restarted about 3 s later.
 * {@code local-fallback} keeps sending, never above the provider's limit in any second, and loses nothing;
 * {@code fail-closed} sends nothing while Redis is down, then delivers everything; both return to shared mode
 * by themselves, also a sender with nothing to send (its probe). Rates scaled down (provider 20/s, shared budget 15/s; the fallback takes 15/3 per sender).
 */
@org.junit.jupiter.api.Tag("quiet") // real rates, little headroom: run alone (sender/pom.xml)
class RedisOutageIT {
    private static final String BOT = "outage";
    private static final String TOKEN = "7700" + "1:outage" + "tokenoutagetoken";
    private static final int SENDERS = 3;
    private static final int CHATS = 75;
    private static final int PER_CHAT = 2;
    private static final int TOTAL = CHATS * PER_CHAT;
    private static final int PROVIDER_PER_S = 20;

    private RedisInstance redis;
    private FakeTelegram telegram;
    private final List<SenderService> senders = new ArrayList<>();
    private final List<SimpleMeterRegistry> registries = new ArrayList<>();

    @BeforeEach
    void start() {
        SenderIt.start();
        redis = RedisLauncher.localProcess().launch();
        telegram = FakeTelegram.start(FakeTelegramLimits.telegram().withGlobalPerSecond(PROVIDER_PER_S));
    }

    @AfterEach
    void stop() {
        senders.forEach(SenderService::close);
        if (telegram != null) {
            telegram.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    private String startSenders(String mode) {
        String prefix = "outage-" + mode + "-" + System.nanoTime();
        SenderIt.topics(prefix, 6);
        Map<String, String> s = SenderIt.settings(prefix, prefix + "-senders", telegram.apiUrl(), Map.of(BOT, TOKEN));
        s.put("redis.url", redis.url());
        s.put("redis.command.timeout.ms", "200");
        s.put("budget.global.rate.per.s", "15");
        s.put("budget.redis.outage.mode", mode);
        s.put("budget.max.replicas", Integer.toString(SENDERS));
        s.put("budget.redis.probe.interval.ms", "300");
        s.put("budget.circuit.minimum.calls", "3");
        List<OutboundMessage> backlog = new ArrayList<>();
        for (int n = 0; n < PER_CHAT; n++) {
            for (int c = 0; c < CHATS; c++) {
                backlog.add(SenderIt.message(mode + "-" + c + "-" + n, BOT, Integer.toString(4000 + c)).build());
            }
        }
        SenderIt.produce(prefix + ".outbox.live", backlog);
        for (int i = 1; i <= SENDERS; i++) {
            s.put("sender.instance.id", prefix + "-" + i);
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            SenderService sender = new SenderService(SenderConfig.from(Settings.of(s)), meters);
            senders.add(sender);
            registries.add(meters);
            sender.start();
        }
        return prefix;
    }

    private boolean allIn(BudgetState state) {
        return senders.stream().allMatch(x -> x.budgetState() == state);
    }

    private void assertEachDeliveredOnceWithOneResult(String prefix) {
        List<FakeTelegramAccepted> accepted = telegram.accepted();
        Set<String> unique = new HashSet<>();
        accepted.forEach(a -> unique.add(a.chatId() + "|" + a.text()));
        assertThat(accepted).as("nothing lost, nothing twice").hasSize(TOTAL);
        assertThat(unique).hasSize(TOTAL);
        try (SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results")) {
            Map<String, DeliveryResult> byId = results.awaitResults(TOTAL, Duration.ofSeconds(20));
            assertThat(results.all).as("exactly one result per message").hasSize(TOTAL);
            assertThat(byId.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
        }
        assertThat(telegram.rejected429Count()).as("no 429 at all; by scope %s", telegram.rejected429ByScope()).isZero();
        assertThat(telegram.maxBotMessagesPer(Duration.ofSeconds(1))).isLessThanOrEqualTo(PROVIDER_PER_S);
        for (SimpleMeterRegistry meters : registries) {
            // issue 6: Lettuce's own command latencies of both Redis clients are in the process registry
            assertThat(meters.find(LettuceResources.COMMAND_COMPLETION).tag("client", "budget").tag("command", "EVALSHA")
                    .timer()).as("budget EVALSHA latency").isNotNull();
            // issue 19: the marks ride on the budget's calls; the sent-mark client's own command is the flush of what no
            // budget call carried (the last DONE marks, once traffic stops), within 1.5 x the flush interval
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(meters.find(LettuceResources.COMMAND_COMPLETION).tag("client", "sent_marks")
                            .tag("command", "EVALSHA").timer()).as("sent-mark flush latency").isNotNull());
            assertThat(meters.find(SenderService.REDIS_ROUND_TRIPS).tag("client", "budget").functionCounter().count())
                    .isPositive();
        }
    }

    @Test
    void local_fallback_stays_within_the_limit_loses_nothing_and_returns_to_shared() {
        String prefix = startSenders("local-fallback");
        await().atMost(Duration.ofSeconds(30)).until(() -> telegram.accepted().size() >= 30);
        redis.stop();
        long down = System.currentTimeMillis();
        await().atMost(Duration.ofSeconds(10)).until(() -> allIn(BudgetState.FALLBACK_LOCAL));
        // counted from 500 ms after the stop: what Redis granted (reserved) before it may reach the provider just after
        await("the fallback keeps sending while Redis is down").atMost(Duration.ofSeconds(10))
                .until(() -> telegram.accepted().stream().filter(a -> a.acceptedAtMillis() > down + 500).count() >= 10);
        long up = System.currentTimeMillis();
        redis.restart();
        await().atMost(Duration.ofSeconds(20)).until(() -> allIn(BudgetState.SHARED));
        await().atMost(Duration.ofSeconds(40)).until(() -> telegram.accepted().size() >= TOTAL);

        assertEachDeliveredOnceWithOneResult(prefix);
        assertThat(telegram.accepted().stream().filter(a -> a.acceptedAtMillis() > down + 500 && a.acceptedAtMillis() < up))
                .as("sent while Redis was down").isNotEmpty();
    }

    @Test
    void fail_closed_sends_nothing_while_redis_is_down_then_everything_and_returns_to_shared() {
        String prefix = startSenders("fail-closed");
        await().atMost(Duration.ofSeconds(30)).until(() -> telegram.accepted().size() >= 30);
        redis.stop();
        long down = System.currentTimeMillis();
        await().atMost(Duration.ofSeconds(10)).until(() -> allIn(BudgetState.PAUSED));
        // a decision granted just before the stop may reach the provider a moment later; none after that
        long settled = down + 500;
        await().pollDelay(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(4)).until(() -> true);
        long up = System.currentTimeMillis();
        assertThat(telegram.accepted().stream().filter(a -> a.acceptedAtMillis() > settled && a.acceptedAtMillis() < up))
                .as("nothing sent while Redis is down").isEmpty();
        redis.restart();
        await().atMost(Duration.ofSeconds(20)).until(() -> allIn(BudgetState.SHARED));
        await().atMost(Duration.ofSeconds(40)).until(() -> telegram.accepted().size() >= TOTAL);

        assertEachDeliveredOnceWithOneResult(prefix);
        assertThat(down).isLessThan(up);
    }

    /**
     * Sessions 21-22 (noticed, left): a sender with nothing to send after an outage reported {@code fallback_local} (its
     * budget state, status and metrics) until its next message, however long Redis had been back, and the outage's
     * drained start of its bots waited for that message too. One sender: a message decided by the fallback while Redis
     * is down, Redis restarted (empty), no message after: the sender's probe finds Redis, writes the bot's drained start
     * there and says SHARED.
     */
    @Test
    void an_idle_sender_says_shared_once_redis_is_back_and_replays_the_outage_without_a_message() {
        String prefix = "outage-idle-" + System.nanoTime();
        SenderIt.topics(prefix, 2);
        Map<String, String> s = SenderIt.settings(prefix, prefix + "-senders", telegram.apiUrl(), Map.of(BOT, TOKEN));
        s.put("redis.url", redis.url());
        s.put("redis.command.timeout.ms", "200");
        s.put("budget.redis.outage.mode", "local-fallback");
        s.put("budget.redis.probe.interval.ms", "300");
        s.put("sender.instance.id", prefix + "-1");
        SenderService sender = new SenderService(SenderConfig.from(Settings.of(s)), new SimpleMeterRegistry());
        senders.add(sender);
        sender.start();
        SenderIt.produce(prefix + ".outbox.live", List.of(SenderIt.message("idle-1", BOT, "5001").build()));
        await().atMost(Duration.ofSeconds(30)).until(() -> telegram.accepted().size() == 1);
        assertThat(sender.budgetState()).isEqualTo(BudgetState.SHARED);

        redis.stop();
        SenderIt.produce(prefix + ".outbox.live", List.of(SenderIt.message("idle-2", BOT, "5002").build()));
        await("the fallback decides the message Redis cannot").atMost(Duration.ofSeconds(30))
                .until(() -> telegram.accepted().size() == 2);
        assertThat(sender.budgetState()).isEqualTo(BudgetState.FALLBACK_LOCAL);

        redis.restart(); // empty: nothing of the bot in it
        await("SHARED with no message to decide").atMost(Duration.ofSeconds(10))
                .until(() -> sender.budgetState() == BudgetState.SHARED);
        try (io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(redis.url()); var conn = client.connect()) {
            assertThat(conn.sync().exists("sluice:{" + BOT + "}:bot"))
                    .as("the outage's drained start of the bot, written by the resume the probe made").isEqualTo(1L);
        }
        assertThat(telegram.accepted()).hasSize(2);
    }
}
