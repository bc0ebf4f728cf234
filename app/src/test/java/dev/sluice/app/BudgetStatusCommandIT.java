package dev.sluice.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetLimits;
import dev.sluice.sender.budget.PenaltyScope;
import dev.sluice.sender.budget.RedisGcraBudget;
import dev.sluice.sender.budget.quota.PostgresQuota;
import dev.sluice.sender.budget.quota.QuotaConfig;
import dev.sluice.testkit.PostgresInstance;
import dev.sluice.testkit.PostgresLauncher;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code sluice budget status} against a real redis-server (and PostgreSQL for the quota line). */
class BudgetStatusCommandIT {
    private static RedisInstance redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisLauncher.start();
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    private static String[] run(int expectedExit, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cmd = new CommandLine(new SluiceCli()).setCaseInsensitiveEnumValuesAllowed(true);
        cmd.setOut(new PrintWriter(out));
        cmd.setErr(new PrintWriter(err));
        int exit = cmd.execute(args);
        assertThat(exit).as("exit code; stderr: %s", err).isEqualTo(expectedExit);
        return new String[] {out.toString(), err.toString()};
    }

    @Test
    void shows_burst_gates_and_aimd_as_json_and_text() throws Exception {
        String bot = "status-" + Long.toString(System.nanoTime(), 36);
        BudgetConfig config = BudgetConfig.of(new BudgetLimits(0.1, 4, 1, 3));
        try (RedisGcraBudget budget = new RedisGcraBudget(redis.url(), config, Duration.ofSeconds(2))) {
            budget.tryAcquire(bot, "7");
            // the chat's penalty first: one reported while the bot's gate is up would extend the bot's gate too
            budget.penalizeChat(bot, "8", Duration.ofSeconds(60));
            budget.penalize(bot, PenaltyScope.BOT, "7", Duration.ofSeconds(30));
        }
        // the command reads the budget with the same limits the writer used (the chat burst of 3 is not the default; a
        // config built in code grants without the global arrival margin)
        String[] json = run(0, "budget", "status", "--key", bot, "--chat", "7", "--redis-url", redis.url(), "--json",
                "-D", "budget.global.rate.per.s=0.1", "-D", "budget.global.burst=4", "-D", "budget.chat.burst=3",
                "-D", "budget.global.arrival.margin.ms=0");
        JsonNode n = new ObjectMapper().readTree(json[0]);
        assertThat(n.get("key").asText()).isEqualTo(bot);
        assertThat(n.get("global").get("remainingBurst").asLong()).isEqualTo(3);
        assertThat(n.get("aimdMultiplier").asDouble()).isEqualTo(0.5);
        assertThat(n.get("effectiveRatePerS").asDouble()).isCloseTo(0.05, org.assertj.core.data.Offset.offset(0.001));
        assertThat(n.get("gates")).hasSize(2);
        assertThat(n.get("gates").get(0).get("scope").asText()).isEqualTo("chat");
        assertThat(n.get("gates").get(0).get("id").asText()).isEqualTo("8");
        // the penalty was 60 s a moment ago: a loaded machine (two forks, other builds) took more than 1 s to get here
        assertThat(n.get("gates").get(0).get("remainingMs").asLong()).isBetween(50_000L, 60_000L);
        assertThat(n.get("gates").get(1).get("scope").asText()).isEqualTo("bot");
        // one grant on chat 7 (1/s, burst 3): 2 left, or 3 again if the CLI took more than a second to get here
        assertThat(n.get("chat").get("remainingBurst").asLong()).isBetween(2L, 3L);
        // with the default arrival margin (50 ms) the configured rate is shown as configured (it showed 0.0952 for
        // 0.1, i.e. 28.571 for Telegram's 30), and the effective one less the margin
        JsonNode withMargin = new ObjectMapper().readTree(run(0, "budget", "status", "--key", bot, "--redis-url",
                redis.url(), "--json", "-D", "budget.global.rate.per.s=0.1", "-D", "budget.global.burst=4")[0]);
        assertThat(withMargin.get("configuredRatePerS").asDouble()).isEqualTo(0.1);
        assertThat(withMargin.get("effectiveRatePerS").asDouble()).isCloseTo(0.1 * 1000 / 1050 * 0.5,
                org.assertj.core.data.Offset.offset(0.0001));

        String text = run(0, "budget", "status", "--key", bot, "--redis-url", redis.url(),
                "-D", "budget.global.rate.per.s=0.1", "-D", "budget.global.burst=4")[0];
        assertThat(text).contains("key " + bot).contains("AIMD multiplier 0.500").contains("burst left 3 of 4")
                .contains("gate      bot lifts in").contains("gate      chat 8 lifts in")
                .contains("senders   none published limits of this key");
    }

    @Test
    void bad_input_is_named_and_redis_down_is_an_error() {
        assertThat(run(2, "budget", "status", "--key", "bad{key}", "--redis-url", redis.url())[1]).contains("bad{key}");
        assertThat(run(2, "budget", "status", "--key", "k")[1]).contains("redis.url");
        assertThat(run(1, "budget", "status", "--key", "k", "--redis-url", "redis://127.0.0.1:1")[1])
                .contains("cannot connect to Redis");
    }

    @Test
    void shows_the_postgres_quota_when_configured() throws Exception {
        PostgresLauncher.unavailableReason().ifPresent(reason -> assumeTrue(false, reason));
        try (PostgresInstance pg = PostgresLauncher.start()) {
            QuotaConfig quota = QuotaConfig.builder(pg.jdbcUrl()).credentials(PostgresInstance.USER, null)
                    .limit("sms", 100, Duration.ofDays(1)).leaseSize(7).build();
            try (PostgresQuota store = new PostgresQuota(quota)) {
                assertThat(store.take("sms").granted()).isTrue(); // leases 7
                String[] json = run(0, "budget", "status", "--key", "sms", "--redis-url", redis.url(), "--json",
                        "-D", "quota.jdbc.url=" + pg.jdbcUrl(), "-D", "quota.jdbc.user=" + PostgresInstance.USER,
                        "-D", "quota.sms.limit=100");
                JsonNode q = new ObjectMapper().readTree(json[0]).get("quota");
                assertThat(q.get("used").asLong()).isEqualTo(7);
                assertThat(q.get("quota").asLong()).isEqualTo(100);
                assertThat(q.get("windowEndsInMs").asLong()).isBetween(1L, 86_400_000L);
            }
        }
    }
}
