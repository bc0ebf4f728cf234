package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.config.Settings;
import dev.sluice.metrics.BudgetState;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import io.lettuce.core.RedisClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Sessions 21-22 (noticed, left): a sender with nothing to send after a Redis outage reported {@code fallback_local}
 * (its budget state, status and metrics) until its next message, however long Redis had been back, and the outage's
 * drained start of its bots waited for that message too. One real {@link SenderService} (production wiring) and a real
 * redis-server: a message decided by the fallback while Redis is down, Redis restarted (empty), and no message after:
 * the sender's probe finds Redis, writes the bot's drained start there and says SHARED.
 */
class IdleSenderRedisReturnIT {
    private static final String BOT = "idle";
    private static final String TOKEN = "7700" + "2:idle" + "tokenidletokenid";

    private RedisInstance redis;
    private FakeTelegram telegram;
    private SenderService sender;

    @BeforeEach
    void start() {
        SenderIt.start();
        redis = RedisLauncher.localProcess().launch();
        telegram = FakeTelegram.start(FakeTelegramLimits.telegram());
    }

    @AfterEach
    void stop() {
        if (sender != null) {
            sender.close();
        }
        if (telegram != null) {
            telegram.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void anIdleSenderSaysSharedOnceRedisIsBackAndReplaysTheOutageWithoutAMessage() {
        String prefix = "idle-" + System.nanoTime();
        SenderIt.topics(prefix, 2);
        Map<String, String> s = SenderIt.settings(prefix, prefix + "-senders", telegram.apiUrl(), Map.of(BOT, TOKEN));
        s.put("redis.url", redis.url());
        s.put("redis.command.timeout.ms", "200");
        s.put("budget.redis.outage.mode", "local-fallback");
        s.put("budget.redis.probe.interval.ms", "300");
        s.put("sender.instance.id", prefix + "-1");
        sender = new SenderService(SenderConfig.from(Settings.of(s)), new SimpleMeterRegistry());
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
        try (RedisClient client = RedisClient.create(redis.url()); var conn = client.connect()) {
            assertThat(conn.sync().exists("sluice:{" + BOT + "}:bot"))
                    .as("the outage's drained start of the bot, written by the resume the probe made").isEqualTo(1L);
        }
        assertThat(telegram.accepted()).hasSize(2);
    }
}
