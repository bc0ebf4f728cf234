package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.OutboundMessage;
import dev.sluice.config.Settings;
import dev.sluice.metrics.BudgetState;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramCall;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import dev.sluice.testkit.TelegramBehaviour;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A bot-wide 429 while Redis is down (two faults at once, found when RedisOutageIT met one under load): 3 senders decide
 * alone ({@code local-fallback}), none knows the others' penalty gates, and Telegram extends a penalty on every call
 * made during it. Each sender's first call after its own gate lifted landed inside the penalty another sender's call
 * had just extended, so with three senders probing about once a second each the bot's penalty never ended while Redis
 * stayed down. The penalty must end within a bound, and nothing is lost or sent twice.
 */
@org.junit.jupiter.api.Tag("quiet") // real rates, little headroom: run alone (sender/pom.xml)
class FallbackBotPenaltyIT {
    private static final String BOT = "fallpen";
    private static final String BOT_ID = "773000001"; // the token's id part: how FakeTelegram names the bot
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of(BOT_ID);
    private static final int SENDERS = 3;
    private static final int CHATS = 400;

    private RedisInstance redis;
    private FakeTelegram telegram;
    private final List<SenderService> senders = new ArrayList<>();

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

    @Test
    void a_bot_wide_429_while_redis_is_down_ends_and_the_fallback_sends_again() {
        SenderIt.start();
        redis = RedisLauncher.localProcess().launch();
        telegram = FakeTelegram.start(FakeTelegramLimits.telegram().withGlobalPerSecond(20));
        String prefix = "fallpen-" + System.nanoTime();
        SenderIt.topics(prefix, 6);
        Map<String, String> s = SenderIt.settings(prefix, prefix + "-senders", telegram.apiUrl(), Map.of(BOT, TOKEN));
        s.put("redis.url", redis.url());
        s.put("redis.command.timeout.ms", "200");
        s.put("budget.global.rate.per.s", "15");
        s.put("budget.redis.outage.mode", "local-fallback");
        s.put("budget.max.replicas", Integer.toString(SENDERS));
        s.put("budget.redis.probe.interval.ms", "300");
        s.put("budget.circuit.minimum.calls", "3");
        List<OutboundMessage> backlog = new ArrayList<>();
        for (int c = 0; c < CHATS; c++) {
            backlog.add(SenderIt.message("fp-" + c, BOT, Integer.toString(5000 + c)).build());
        }
        SenderIt.produce(prefix + ".outbox.live", backlog);
        for (int i = 1; i <= SENDERS; i++) {
            s.put("sender.instance.id", prefix + "-" + i);
            SenderService sender = new SenderService(SenderConfig.from(Settings.of(s)), new SimpleMeterRegistry());
            senders.add(sender);
            sender.start();
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> telegram.accepted().size() >= 20);
        redis.stop();
        await().atMost(Duration.ofSeconds(10)).until(() -> senders.stream().allMatch(x -> x.budgetState() == BudgetState.FALLBACK_LOCAL));
        int before = telegram.accepted().size();
        await("the fallback sends").atMost(Duration.ofSeconds(10)).until(() -> telegram.accepted().size() >= before + 5);

        // a bot-wide penalty of 1 s at the provider (as another app on the same token could cause)
        telegram.enqueueForBot(BOT_ID, TelegramBehaviour.tooManyRequests(Duration.ofSeconds(1)), 1);
        long injected = System.currentTimeMillis();
        await("the first 429").atMost(Duration.ofSeconds(10)).until(() -> telegram.rejected429Count() >= 1);
        // ended: 10 calls accepted after the last 429 (the provider accepts nothing while its penalty runs)
        await("the bot's penalty ends while Redis is down").atMost(Duration.ofSeconds(30)).until(() -> {
            List<FakeTelegramCall> calls = telegram.calls();
            int sinceLast429 = 0;
            for (int i = calls.size() - 1; i >= 0 && calls.get(i).status() != 429; i--) {
                sinceLast429++;
            }
            return sinceLast429 >= 10;
        });
        long ended = System.currentTimeMillis();
        long rejected = telegram.rejected429Count();
        System.out.printf("fallback bot penalty: ended %d ms after the injection, %d x 429%n", ended - injected, rejected);

        redis.restart();
        await().atMost(Duration.ofSeconds(20)).until(() -> senders.stream().allMatch(x -> x.budgetState() == BudgetState.SHARED));
        await().atMost(Duration.ofSeconds(60)).until(() -> telegram.accepted().size() >= CHATS);
        assertThat(telegram.accepted()).as("each once").hasSize(CHATS);
        assertThat(telegram.accepted().stream().map(a -> a.chatId()).distinct().count()).isEqualTo(CHATS);
    }
}
