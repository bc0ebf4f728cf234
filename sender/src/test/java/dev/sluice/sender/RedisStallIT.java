package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.OutboundMessage;
import dev.sluice.config.Settings;
import dev.sluice.metrics.BudgetState;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Redis lost under 3 senders at Telegram's own limits (30/s per bot, shared budget at the default 30/s: no headroom,
 * unlike {@code RedisOutageIT}'s 15 of 20), two ways: a stall (SIGSTOP: the connection stays open and nothing answers,
 * as in a long fork or a paused VM) and a disconnect (the process stopped). Found from outside: a stall cost 21
 * bot-wide 429s in one of three runs. Measured here before the fixes:
 * <ul>
 *   <li>stall: the fallback delivered 2.2 msg/s (every mark read and SENT write waited the command timeout, one after
 *       another for a batch's heads): the sent marks now have their own breaker ({@code MarksCircuit}): 7.7-10.8/s;
 *       then the fallback's lanes are paced at the fallback's share and not aligned to reservation windows it never
 *       grants ({@code LanePacer}): 19.0-20.7/s (disconnect 25.0-26.0/s) of a 28.6/s share;</li>
 *   <li>disconnect: 6 x 429 in the second of the switch in one of two runs (slots the shared budget had reserved ahead were still sent
 *       while the fresh fallback granted at once): the fallback now starts each bot drained for max(1 s,
 *       {@code budget.reservation.max.ms}) ({@code LocalGcraBudget#startDrained}); after: 0.</li>
 * </ul>
 * Each case: no 429 at all, never above 30 in any second, the fallback keeps sending while Redis is gone, every
 * sender back in shared mode after.
 */
@org.junit.jupiter.api.Tag("quiet") // real rates, little headroom: run alone (sender/pom.xml)
class RedisStallIT {
    private static final String BOT = "stall";
    private static final String TOKEN = "7700" + "2:stall" + "tokenstalltokenstall";
    private static final int SENDERS = 3;

    private RedisInstance redis;
    private FakeTelegram telegram;
    private final List<SenderService> senders = new ArrayList<>();

    @BeforeEach
    void start() {
        SenderIt.start();
        redis = RedisLauncher.localProcess().launch();
        telegram = FakeTelegram.start(FakeTelegramLimits.telegram());
    }

    @AfterEach
    void stop() throws Exception {
        if (redis.pid() > 0) {
            signal(redis.pid(), "CONT");
        }
        senders.forEach(SenderService::close);
        telegram.close();
        redis.close();
    }

    private static void signal(long pid, String sig) throws Exception {
        assertThat(new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).inheritIO().start().waitFor()).isZero();
    }

    private boolean allIn(BudgetState state) {
        return senders.stream().allMatch(x -> x.budgetState() == state);
    }

    /**
     * What the provider saw around the 429s, per 100 ms from 1.5 s before the first one to 0.5 s after the last:
     * accepted calls and 429s, so a failing run tells a burst (calls bunched by a delay) from a rate above the limit.
     */
    private String timeline(long fallbackAt, long resumedAt) {
        List<dev.sluice.testkit.FakeTelegramCall> calls = telegram.calls();
        long first = calls.stream().filter(c -> c.status() == 429).mapToLong(c -> c.atMillis()).min().orElseThrow();
        long last = calls.stream().filter(c -> c.status() == 429).mapToLong(c -> c.atMillis()).max().orElseThrow();
        StringBuilder out = new StringBuilder("calls per 100 ms (accepted/429), fallback from +"
                + (fallbackAt - first + 1500) + " ms to +" + (resumedAt - first + 1500) + " ms:");
        for (long at = first - 1500; at <= last + 500; at += 100) {
            long from = at;
            long ok = calls.stream().filter(c -> c.atMillis() >= from && c.atMillis() < from + 100
                    && c.status() == 200).count();
            long refused = calls.stream().filter(c -> c.atMillis() >= from && c.atMillis() < from + 100
                    && c.status() == 429).count();
            out.append(' ').append(ok).append(refused > 0 ? "/" + refused : "");
        }
        return out.toString();
    }

    @ParameterizedTest
    @ValueSource(strings = {"stall", "disconnect"})
    void losing_redis_costs_no_429_and_the_fallback_keeps_sending(String how) throws Exception {
        String prefix = "stall-" + how + "-" + System.nanoTime();
        SenderIt.topics(prefix, 6);
        Map<String, String> s = SenderIt.settings(prefix, prefix + "-senders", telegram.apiUrl(), Map.of(BOT, TOKEN));
        s.put("redis.url", redis.url());
        s.put("budget.max.replicas", Integer.toString(SENDERS));
        List<OutboundMessage> backlog = new ArrayList<>();
        for (int n = 0; n < 2; n++) {
            for (int c = 0; c < 400; c++) {
                backlog.add(SenderIt.message(how + "-" + c + "-" + n, BOT, Integer.toString(5000 + c)).build());
            }
        }
        SenderIt.produce(prefix + ".outbox.live", backlog);
        for (int i = 1; i <= SENDERS; i++) {
            s.put("sender.instance.id", prefix + "-" + i);
            SenderService sender = new SenderService(SenderConfig.from(Settings.of(s)), new SimpleMeterRegistry());
            senders.add(sender);
            sender.start();
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> telegram.accepted().size() >= 100);
        long pid = redis.pid();
        if (how.equals("stall")) {
            signal(pid, "STOP");
        } else {
            redis.stop();
        }
        await().atMost(Duration.ofSeconds(15)).until(() -> allIn(BudgetState.FALLBACK_LOCAL));
        long fallbackAt = System.currentTimeMillis();
        await().pollDelay(Duration.ofSeconds(6)).atMost(Duration.ofSeconds(7)).until(() -> true);
        long resumedAt = System.currentTimeMillis();
        if (how.equals("stall")) {
            signal(pid, "CONT");
        } else {
            redis.restart();
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> allIn(BudgetState.SHARED));
        long sharedAt = System.currentTimeMillis();
        await("sending in shared mode again").atMost(Duration.ofSeconds(20)).until(() ->
                telegram.accepted().stream().filter(a -> a.acceptedAtMillis() > sharedAt).count() >= 60);

        long inFallback = telegram.accepted().stream().filter(a -> a.acceptedAtMillis() > fallbackAt
                && a.acceptedAtMillis() < resumedAt).count();
        double fallbackPerS = inFallback * 1000.0 / (resumedAt - fallbackAt);
        System.out.printf("RedisStallIT %s: %.1f msg/s in fallback (share: 3 x 9.5), %d x 429 %s, max %d in any 1 s%n",
                how, fallbackPerS, telegram.rejected429Count(), telegram.rejected429ByScope(),
                telegram.maxBotMessagesPer(Duration.ofSeconds(1)));
        if (telegram.rejected429Count() > 0) {
            System.out.println(timeline(fallbackAt, resumedAt));
        }
        assertThat(telegram.rejected429Count()).as("429s").isZero();
        assertThat(telegram.maxBotMessagesPer(Duration.ofSeconds(1))).isLessThanOrEqualTo(30);
        assertThat(fallbackPerS).as("msg/s delivered by the fallback while Redis was gone (before: 2.3 in a stall, "
                + "9.5 disconnected)").isGreaterThanOrEqualTo(10.0);
    }
}
