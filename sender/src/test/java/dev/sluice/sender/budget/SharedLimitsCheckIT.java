package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.sluice.config.ConfigException;
import dev.sluice.config.Settings;
import dev.sluice.testkit.RedisCluster;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * {@link SharedLimitsCheck} against real redis-servers, with limits read from the settings a sender reads: senders that
 * agree see nothing; a sender configured with another rate for a bot both serve is named with the key and both values
 * (and only for that bot), refused at start under {@code refuse}; a sender that closed, or stopped writing (killed), stops
 * counting; Redis unreachable is not a disagreement; on a Redis Cluster each bot's hash lives in its bot's slot.
 */
class SharedLimitsCheckIT {
    private static final Duration TIMEOUT = Duration.ofSeconds(2);

    private static Map<String, SharedLimits> limits(Map<String, String> settings, String... bots) {
        BudgetConfig config = BudgetConfig.from(Settings.of(settings));
        Map<String, SharedLimits> out = new LinkedHashMap<>();
        for (String bot : bots) {
            out.put(bot, SharedLimits.of(config, bot));
        }
        return out;
    }

    private static SharedLimitsCheck check(String url, String instance, Map<String, SharedLimits> limits, Duration period) {
        return new SharedLimitsCheck(url, instance, limits, period, TIMEOUT);
    }

    @Test
    void aSenderWithAnotherRateIsNamedWithBothValuesAndOnlyForThatBot() throws Exception {
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             SharedLimitsCheck a = check(redis.url(), "sender-a", limits(Map.of(), "alerts", "news"),
                     Duration.ofMinutes(1));
             SharedLimitsCheck same = check(redis.url(), "sender-b", limits(Map.of(), "alerts", "news"),
                     Duration.ofMinutes(1))) {
            assertThat(a.round()).isEmpty();
            assertThat(same.round()).isEmpty();
            assertThat(a.round()).isEmpty();
            assertThat(a.disagreeingBots()).isZero();

            try (SharedLimitsCheck other = check(redis.url(), "sender-c",
                    limits(Map.of("bot.news.rate.per.s", "20"), "news", "weather"), Duration.ofMinutes(1))) {
                List<String> seenByOther = other.round();
                // named by the key that sets it (found from outside: a per-bot rate was named budget.global.rate.per.s)
                assertThat(seenByOther).singleElement().asString().startsWith("bot news: ")
                        .contains("bot.news.rate.per.s=20 here, budget.global.rate.per.s=30 at sender sender-a")
                        .contains(" at sender sender-b");
                List<String> seenByA = a.round();
                assertThat(seenByA).singleElement().asString().startsWith("bot news: ")
                        .contains(" here, ").contains(" at sender sender-c").doesNotContain("alerts");
                assertThat(a.disagreeingBots()).isEqualTo(1);
                try (SharedLimitsCheck refused = check(redis.url(), "sender-d",
                        limits(Map.of("bot.news.rate.per.s", "20"), "news"), Duration.ofMinutes(1))) {
                    assertThatThrownBy(() -> refused.start(SharedLimitsCheck.Policy.REFUSE))
                            .isInstanceOf(ConfigException.class)
                            .hasMessageContaining("budget.limits.check=refuse")
                            .hasMessageContaining("bot news").hasMessageContaining("at sender sender-a");
                    // retracted with the refusal, not only at close: a refused sender that dies before its close
                    // (its process exits on the refusal) must not count as a live sender for the 90 s of its field
                    try (io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(redis.url());
                         var conn = client.connect()) {
                        assertThat(conn.sync().hkeys("sluice:{news}:limits")).doesNotContain("sender-d");
                    }
                }
            }
            // sender-c closed, and sender-d (refused) was closed by its sender: their fields are gone at once
            assertThat(a.round()).isEmpty();
            assertThat(a.disagreeingBots()).isZero();
        }
    }

    @Test
    void theSameRateSetByAnotherKeyIsNoDisagreement() throws Exception {
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             SharedLimitsCheck byDefault = check(redis.url(), "sender-a", limits(Map.of(), "news"), Duration.ofMinutes(1));
             SharedLimitsCheck perBot = check(redis.url(), "sender-b", limits(Map.of("bot.news.rate.per.s", "30"), "news"),
                     Duration.ofMinutes(1))) {
            assertThat(byDefault.round()).isEmpty();
            perBot.start(SharedLimitsCheck.Policy.REFUSE); // 30 from bot.news.rate.per.s is the default's 30
            assertThat(byDefault.round()).isEmpty();
            assertThat(byDefault.disagreeingBots()).isZero();
        }
    }

    @Test
    void anotherReplicaCountOrOutageModeIsADisagreement() throws Exception {
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             SharedLimitsCheck a = check(redis.url(), "sender-a", limits(Map.of(), "alerts"), Duration.ofMinutes(1));
             SharedLimitsCheck replicas = check(redis.url(), "sender-b", limits(Map.of("budget.max.replicas", "2"),
                     "alerts"), Duration.ofMinutes(1));
             SharedLimitsCheck failClosed = check(redis.url(), "sender-c",
                     limits(Map.of("budget.redis.outage.mode", "fail-closed"), "alerts"), Duration.ofMinutes(1))) {
            assertThat(a.round()).isEmpty();
            // each divides (or does not use) the fallback share otherwise: global rate / budget.max.replicas
            assertThat(replicas.round()).singleElement().asString()
                    .contains("budget.max.replicas=2 here, 3 at sender sender-a");
            assertThat(failClosed.round()).singleElement().asString()
                    .contains("budget.redis.outage.mode=fail-closed here, local-fallback at sender sender-a");
            assertThat(a.disagreeingBots()).isZero(); // its last round saw neither yet
            assertThat(a.round()).singleElement().asString()
                    .contains("budget.max.replicas=3 here, 2 at sender sender-b")
                    .contains("budget.redis.outage.mode=local-fallback here, fail-closed at sender sender-c");
            assertThat(a.disagreeingBots()).isEqualTo(1);
        }
    }

    @Test
    void anUpgradeThatOnlyEditsBudgetLuasCommentsAgreesAndStartsUnderRefuse() throws Exception {
        BudgetConfig config = BudgetConfig.from(Settings.of(Map.of()));
        String commentsEdited = SharedLimitsTest.commentOnlyEdit(BudgetScript.TEXT);
        String codeEdited = "local sluice_test_edit = 1\n" + BudgetScript.TEXT;
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             SharedLimitsCheck running = check(redis.url(), "sender-a", Map.of("alerts", SharedLimits.of(config, "alerts")),
                     Duration.ofMinutes(1));
             SharedLimitsCheck upgraded = check(redis.url(), "sender-b",
                     Map.of("alerts", SharedLimits.of(config, "alerts", commentsEdited)), Duration.ofMinutes(1));
             SharedLimitsCheck otherCode = check(redis.url(), "sender-c",
                     Map.of("alerts", SharedLimits.of(config, "alerts", codeEdited)), Duration.ofMinutes(1))) {
            assertThat(running.round()).isEmpty();
            upgraded.start(SharedLimitsCheck.Policy.REFUSE); // the first upgraded sender starts
            assertThat(running.round()).isEmpty();
            assertThat(running.disagreeingBots()).isZero();
            assertThatThrownBy(() -> otherCode.start(SharedLimitsCheck.Policy.REFUSE))
                    .isInstanceOf(ConfigException.class).hasMessageContaining("bot alerts: " + SharedLimits.SCRIPT + "=");
        }
    }

    @Test
    void aKilledSendersFieldsExpireAndAClosedSendersGoAtOnce() throws Exception {
        Duration period = Duration.ofMillis(200); // fields live 3 periods
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             SharedLimitsCheck a = check(redis.url(), "sender-a", limits(Map.of(), "alerts"), period)) {
            SharedLimitsCheck killed = check(redis.url(), "sender-k",
                    limits(Map.of("budget.chat.rate.per.s", "0.5"), "alerts"), period);
            assertThat(killed.round()).isEmpty(); // a was not there yet
            assertThat(a.round()).singleElement().asString().contains("budget.chat.rate.per.s=1 here, 0.5 at sender sender-k");
            // sender-k stops writing (as a killed process would): its field expires after 3 periods
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (!a.round().isEmpty()) {
                assertThat(System.nanoTime()).as("sender-k's field expired").isLessThan(deadline);
                Thread.sleep(50);
            }
            assertThat(a.disagreeingBots()).isZero();
            killed.close(); // removes the field it no longer has; harmless

            try (SharedLimitsCheck b = check(redis.url(), "sender-b", limits(Map.of("budget.global.burst", "5"), "alerts"),
                    Duration.ofMinutes(1))) {
                b.round();
                assertThat(a.round()).singleElement().asString().contains("budget.global.burst=1 here, 5 at sender sender-b");
            }
            assertThat(a.round()).isEmpty(); // closed: removed at once, not after its TTL of 3 minutes
        }
    }

    private static List<String> warnings(ListAppender<ILoggingEvent> appender, String containing) {
        return appender.list.stream().filter(e -> e.getLevel() == Level.WARN).map(ILoggingEvent::getFormattedMessage)
                .filter(m -> m.contains(containing)).toList();
    }

    @Test
    void twoLiveProcessesUnderOneInstanceIdAreNamedOnceEveryFiveMinutesAndCounted() throws Exception {
        AtomicLong clockMs = new AtomicLong(1_000_000);
        Logger logger = (Logger) LoggerFactory.getLogger(SharedLimitsCheck.class);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        Duration period = Duration.ofMinutes(1);
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             SharedLimitsCheck first = new SharedLimitsCheck(redis.url(), "sender-a", limits(Map.of(), "alerts", "news"),
                     period, TIMEOUT, clockMs::get);
             SharedLimitsCheck second = new SharedLimitsCheck(redis.url(), "sender-a", limits(Map.of(), "alerts", "news"),
                     period, TIMEOUT, clockMs::get)) {
            assertThat(first.round()).isEmpty();
            assertThat(second.round()).isEmpty(); // its first write: what it replaced may be a killed predecessor's
            assertThat(second.disagreeingBots()).isZero();
            assertThat(first.round()).as("same limits: no disagreement line").isEmpty();
            assertThat(first.disagreeingBots()).as("its field held another process's value").isEqualTo(2);
            second.round();
            assertThat(second.disagreeingBots()).isEqualTo(2);
            assertThat(warnings(appender, "instance id sender-a")).hasSize(2)
                    .allSatisfy(line -> assertThat(line).contains("bots alerts, news").contains("sender.instance.id"));
            first.round();
            second.round();
            assertThat(warnings(appender, "instance id sender-a")).as("once per 5 min each").hasSize(2);
            clockMs.addAndGet(Duration.ofMinutes(SharedLimitsCheck.WARN_INTERVAL_MIN).toMillis());
            first.round();
            assertThat(warnings(appender, "instance id sender-a")).hasSize(3);
        } finally {
            logger.detachAppender(appender);
        }
    }

    @Test
    void aProcessRestartedAfterAKillUnderItsInstanceIdIsNoClash() throws Exception {
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             SharedLimitsCheck killed = check(redis.url(), "sender-a", limits(Map.of(), "alerts"), Duration.ofMinutes(1));
             SharedLimitsCheck restarted = check(redis.url(), "sender-a", limits(Map.of(), "alerts"),
                     Duration.ofMinutes(1))) {
            killed.round();
            killed.round(); // then stops writing, its field still live (90 s here: 3 minutes)
            for (int i = 0; i < 3; i++) {
                assertThat(restarted.round()).isEmpty();
                assertThat(restarted.disagreeingBots()).isZero();
            }
        }
    }

    @Test
    void aCleanCloseRemovesTheFieldOnlyWhileItHoldsThisProcesssValue() throws Exception {
        Map<String, SharedLimits> burst5 = limits(Map.of("budget.global.burst", "5"), "alerts");
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             SharedLimitsCheck observer = check(redis.url(), "sender-c", limits(Map.of(), "alerts"), Duration.ofMinutes(1))) {
            SharedLimitsCheck first = check(redis.url(), "sender-a", burst5, Duration.ofMinutes(1));
            SharedLimitsCheck second = check(redis.url(), "sender-a", burst5, Duration.ofMinutes(1));
            first.round();
            second.round(); // the field now holds second's value
            first.close(); // must not remove it: second is live
            assertThat(observer.round()).singleElement().asString()
                    .contains("budget.global.burst=1 here, 5 at sender sender-a");
            second.close();
            assertThat(observer.round()).isEmpty();
        }
    }

    @Test
    void aSenderWithTheCheckOffStillPublishesSoTheOthersSeeIt() throws Exception {
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             SharedLimitsCheck a = check(redis.url(), "sender-a", limits(Map.of(), "alerts"), Duration.ofMinutes(1));
             SharedLimitsCheck off = check(redis.url(), "sender-off", limits(Map.of("budget.global.rate.per.s", "10"),
                     "alerts"), Duration.ofMinutes(1))) {
            assertThat(a.round()).isEmpty();
            off.start(SharedLimitsCheck.Policy.OFF); // its first round runs at once on its timer thread
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            List<String> seen;
            while ((seen = a.round()).isEmpty()) {
                assertThat(System.nanoTime()).as("sender-off's limits published").isLessThan(deadline);
                Thread.sleep(50);
            }
            assertThat(seen).singleElement().asString().contains("budget.global.rate.per.s=30 here, 10 at sender sender-off");
            assertThat(off.disagreeingBots()).as("off: it does not compare").isZero();
        }
    }

    /**
     * Issue 19's scale note: one EVAL of the check's script per bot and round (its 1.6 KB text sent and hashed each time)
     * was 10,000 calls a second at 10,000 bots and 30 senders. A round is one EVALSHA per bot; a node without the script
     * (SCRIPT FLUSH here; a restart, a failover) costs one EVAL per bot once, and the round still compares.
     */
    @Test
    void aRoundIsOneEvalshaPerBotAndAFlushedScriptCacheCostsOneEvalOnce() throws Exception {
        String[] bots = {"alerts", "news", "weather"};
        try (RedisInstance redis = RedisLauncher.localProcess().launch();
             io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(redis.url());
             var conn = client.connect();
             SharedLimitsCheck a = check(redis.url(), "sender-a", limits(Map.of(), bots), Duration.ofMinutes(1));
             SharedLimitsCheck b = check(redis.url(), "sender-b", limits(Map.of("bot.news.rate.per.s", "20"), bots),
                     Duration.ofMinutes(1))) {
            b.round(); // the first round of the process: the node has no copy of the script yet
            long evalBefore = calls(conn.sync(), "eval");
            long evalshaBefore = calls(conn.sync(), "evalsha");
            assertThat(a.round()).singleElement().asString().startsWith("bot news: ");
            assertThat(b.round()).singleElement().asString().startsWith("bot news: ");
            assertThat(calls(conn.sync(), "evalsha") - evalshaBefore).as("EVALSHA: one per bot and round").isEqualTo(6);
            assertThat(calls(conn.sync(), "eval") - evalBefore).as("no EVAL while the node has the script").isZero();

            conn.sync().scriptFlush();
            assertThat(a.round()).as("compares after NOSCRIPT").singleElement().asString().startsWith("bot news: ");
            assertThat(calls(conn.sync(), "eval") - evalBefore).as("one EVAL per bot after the flush").isEqualTo(3);
            assertThat(a.round()).singleElement().asString().startsWith("bot news: ");
            assertThat(calls(conn.sync(), "eval") - evalBefore).as("cached again: no more EVAL").isEqualTo(3);
            assertThat(a.disagreeingBots()).isEqualTo(1);
        }
    }

    /** {@code calls=} of {@code cmdstat_<command>} in INFO commandstats (0 before its first call). */
    private static long calls(io.lettuce.core.api.sync.RedisCommands<String, String> redis, String command) {
        for (String line : redis.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_" + command + ":calls=")) {
                return Long.parseLong(line.substring(line.indexOf('=') + 1, line.indexOf(',')));
            }
        }
        return 0;
    }

    @Test
    void redisUnreachableIsNotADisagreementAndTheCountStays() throws Exception {
        RedisInstance redis = RedisLauncher.localProcess().launch();
        try (SharedLimitsCheck a = check(redis.url(), "sender-a", limits(Map.of(), "alerts"), Duration.ofMinutes(1));
             SharedLimitsCheck b = check(redis.url(), "sender-b", limits(Map.of("budget.global.rate.per.s", "10"),
                     "alerts"), Duration.ofMinutes(1))) {
            b.round();
            assertThat(a.round()).hasSize(1);
            redis.close();
            assertThat(a.round()).isEmpty();
            assertThat(a.disagreeingBots()).as("the last complete round's count").isEqualTo(1);
            a.start(SharedLimitsCheck.Policy.REFUSE); // nothing known to disagree: starts
        }
    }

    @Test
    void onAClusterEachBotsHashIsInItsSlot() throws Exception {
        try (RedisCluster cluster = RedisCluster.start(3, 0)) {
            String url = "redis-cluster://" + cluster.primaries().get(0).address();
            String[] bots = {"alerts", "news", "weather", "shop", "quotes", "sport"};
            try (SharedLimitsCheck a = check(url, "sender-a", limits(Map.of(), bots), Duration.ofMinutes(1));
                 SharedLimitsCheck b = check(url, "sender-b", limits(Map.of("bot.sport.rate.per.s", "5"), bots),
                         Duration.ofMinutes(1))) {
                a.round();
                assertThat(b.round()).singleElement().asString().startsWith("bot sport: ");
                assertThat(a.round()).singleElement().asString().startsWith("bot sport: ");
                // a second process under b's instance id: b's clean close leaves its field (a compare-and-delete in
                // the bot's slot), its own close removes it
                SharedLimitsCheck b2 = check(url, "sender-b", limits(Map.of("bot.sport.rate.per.s", "5"), bots),
                        Duration.ofMinutes(1));
                b2.round();
                b.close();
                assertThat(a.round()).singleElement().asString().startsWith("bot sport: ").contains("at sender sender-b");
                b2.close();
                assertThat(a.round()).isEmpty();
            }
        }
    }

    @Test
    void theTextFormReadsBackAndNumbersCompareAsTyped() {
        SharedLimits typed = limits(Map.of("budget.global.rate.per.s", "30.0"), "alerts").get("alerts");
        SharedLimits plain = limits(Map.of("budget.global.rate.per.s", "30"), "alerts").get("alerts");
        assertThat(SharedLimits.parse(typed.text())).isEqualTo(plain);
        assertThat(typed.text()).doesNotContain("|").contains(SharedLimits.SCRIPT + "=");
        assertThat(plain.differences(SharedLimits.parse("budget.global.rate.per.s=30;extra=1"), "x"))
                .contains("extra=- here, 1 at x").anyMatch(d -> d.startsWith("budget.chat.rate.per.s="));
    }
}
