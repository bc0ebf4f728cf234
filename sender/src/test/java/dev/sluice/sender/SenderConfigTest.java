package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.config.ConfigException;
import dev.sluice.config.Settings;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SenderConfigTest {
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456789");

    private static Map<String, String> minimal() {
        Map<String, String> m = new HashMap<>();
        m.put("bootstrap.servers", "localhost:9092");
        m.put("schema.registry.url", "http://localhost:8081");
        m.put("redis.url", "redis://localhost:6379");
        m.put("bot.alerts.token", TOKEN);
        return m;
    }

    @Test
    void defaults_follow_the_telegram_faq_and_the_documented_keys() {
        SenderConfig c = new SenderConfig(Settings.of(minimal()));
        assertThat(c.groupId()).isEqualTo("sluice-sender");
        assertThat(c.instanceId()).endsWith("-" + ProcessHandle.current().pid());
        assertThat(c.telegramApiUrl()).isEqualTo("https://api.telegram.org/bot");
        assertThat(c.budgetMode()).isEqualTo(BudgetMode.REDIS);
        assertThat(c.budgetConfig().defaults().globalRatePerS()).isEqualTo(30);
        assertThat(c.budgetConfig().defaults().globalBurst()).isEqualTo(1);
        assertThat(c.budgetConfig().defaults().chatRatePerS()).isEqualTo(1);
        // issue 16: one below Telegram's tolerated 3, so arrival jitter cannot cost a 429 (was 3)
        assertThat(c.budgetConfig().defaults().chatBurst()).isEqualTo(2);
        assertThat(c.topics().outboxLive()).isEqualTo("outbox.live");
        assertThat(c.topics().deliveryResults()).isEqualTo("delivery.results");
        assertThat(c.bots()).containsOnlyKeys("alerts");
        assertThat(c.bots().get("alerts").reveal()).isEqualTo(TOKEN);
    }

    @Test
    void the_bot_api_url_is_taken_with_or_without_its_bot_path() {
        for (String given : List.of("https://api.telegram.org", "https://api.telegram.org/", "https://api.telegram.org/bot",
                "https://api.telegram.org/bot/")) {
            Map<String, String> m = minimal();
            m.put("telegram.api.url", given);
            assertThat(new SenderConfig(Settings.of(m)).telegramApiUrl()).as(given).isEqualTo("https://api.telegram.org/bot");
        }
        Map<String, String> m = minimal();
        m.put("telegram.api.url", "http://127.0.0.1:18090");
        assertThat(new SenderConfig(Settings.of(m)).telegramApiUrl()).isEqualTo("http://127.0.0.1:18090/bot");
    }

    @Test
    void kafka_properties_pass_through_and_secrets_never_print() {
        Map<String, String> m = minimal();
        m.put("kafka.security.protocol", "SASL_SSL");
        m.put("kafka.sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required password=\"p\";");
        m.put("sender.request.timeout.ms", "2500");
        m.put("redis.url", "redis://:s3cret@redis.internal:6379");
        SenderConfig c = new SenderConfig(Settings.of(m));
        assertThat(c.kafkaProperties()).containsEntry("security.protocol", "SASL_SSL").containsKey("sasl.jaas.config");
        assertThat(c.requestTimeout()).isEqualTo(Duration.ofMillis(2500));
        assertThat(c.toString()).doesNotContain(TOKEN).doesNotContain("password=").contains("SASL_SSL")
                .doesNotContain("s3cret").contains("redis.internal");
    }

    @Test
    void environment_overrides_apply() {
        SenderConfig c = new SenderConfig(Settings.of(minimal())
                .withEnvironment(Map.of("SLUICE_BUDGET_GLOBAL_RATE_PER_S", "300", "SLUICE_BUDGET_MODE", "local")));
        assertThat(c.budgetConfig().defaults().globalRatePerS()).isEqualTo(300);
        assertThat(c.budgetMode()).isEqualTo(BudgetMode.LOCAL);
    }

    @Test
    void backpressure_and_unreadable_record_settings_have_their_documented_defaults_and_rules() {
        SenderConfig one = new SenderConfig(Settings.of(minimal()));
        assertThat(one.bufferMaxRecordsPerBot()).as("one bot: the whole buffer").isEqualTo(10_000);
        assertThat(one.deferredMaxRecords()).isEqualTo(100_000);
        assertThat(one.unreadableSchemaGrace()).isEqualTo(java.time.Duration.ofMinutes(1));
        assertThat(one.schemaAutoRegister()).isTrue();
        assertThat(one.topics().outboxDlq()).isEqualTo("outbox.dlq");
        Map<String, String> two = minimal();
        two.put("bot.news.token", TOKEN);
        two.put("sender.buffer.max.records", "1000");
        two.put("schema.registry.auto.register", "false");
        SenderConfig c = new SenderConfig(Settings.of(two));
        assertThat(c.bufferMaxRecordsPerBot()).as("several bots: high-water less one poll").isEqualTo(1000 - 2 * 250);
        assertThat(c.schemaAutoRegister()).isFalse();
        two.put("sender.buffer.max.records.per.bot", "1001");
        assertThatThrownBy(() -> new SenderConfig(Settings.of(two))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("sender.buffer.max.records.per.bot").hasMessageContaining("1001");
    }

    @Test
    void errors_name_the_key_and_the_value() {
        Map<String, String> m = minimal();
        m.put("budget.chat.burst", "zero");
        assertThatThrownBy(() -> new SenderConfig(Settings.of(m))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("budget.chat.burst").hasMessageContaining("zero");

        Map<String, String> mode = minimal();
        mode.put("budget.mode", "memcached");
        assertThatThrownBy(() -> new SenderConfig(Settings.of(mode))).hasMessageContaining("budget.mode")
                .hasMessageContaining("memcached").hasMessageContaining("redis, local");

        Map<String, String> noRedis = minimal();
        noRedis.remove("redis.url");
        assertThatThrownBy(() -> new SenderConfig(Settings.of(noRedis))).hasMessageContaining("redis.url");
        noRedis.put("budget.mode", "local");
        assertThat(new SenderConfig(Settings.of(noRedis)).redisUrl()).isNull();

        Map<String, String> badBot = minimal();
        badBot.put("bot.{evil}.token", TOKEN);
        assertThatThrownBy(() -> new SenderConfig(Settings.of(badBot))).hasMessageContaining("{evil}")
                .hasMessageNotContaining(TOKEN);

        Map<String, String> noBots = minimal();
        noBots.remove("bot.alerts.token");
        assertThatThrownBy(() -> new SenderConfig(Settings.of(noBots))).hasMessageContaining("bot.<botId>.token");

        Map<String, String> badUrl = minimal();
        badUrl.put("telegram.api.url", "not a url");
        assertThatThrownBy(() -> new SenderConfig(Settings.of(badUrl))).hasMessageContaining("telegram.api.url")
                .hasMessageContaining("not a url");
    }

    @Test
    void issue_9_keys_have_documented_defaults_overrides_and_errors_naming_key_and_value() {
        SenderConfig d = new SenderConfig(Settings.of(minimal()));
        assertThat(d.maxInFlightPerBot()).isEqualTo(8);
        assertThat(d.maxReschedules()).isEqualTo(50);
        assertThat(d.resendUncertainClasses()).isEmpty();
        assertThat(d.sentMarkTtl()).isEqualTo(java.time.Duration.ofDays(14));
        assertThat(d.botPenaltyWindow()).isEqualTo(java.time.Duration.ofSeconds(1));
        assertThat(d.botPenaltyMinChats()).isEqualTo(2);
        assertThat(d.breakerFailureRatePercent()).isEqualTo(50f);
        assertThat(d.breakerWindowCalls()).isEqualTo(20);
        assertThat(d.breakerOpen()).isEqualTo(java.time.Duration.ofSeconds(5));
        assertThat(d.breakerHalfOpenCalls()).isEqualTo(2);
        assertThat(d.statusInterval()).isEqualTo(java.time.Duration.ofSeconds(5));

        Map<String, String> m = new java.util.HashMap<>(minimal());
        m.put("sender.max.in.flight.per.bot", "1");
        m.put("sender.resend.uncertain.classes", "critical, ROUTINE");
        m.put("sender.max.reschedules", "0");
        SenderConfig c = new SenderConfig(Settings.of(m));
        assertThat(c.maxInFlightPerBot()).isEqualTo(1);
        assertThat(c.maxReschedules()).isZero();
        assertThat(c.resendUncertainClasses()).containsExactlyInAnyOrder(dev.sluice.avro.NotificationClass.CRITICAL,
                dev.sluice.avro.NotificationClass.ROUTINE);

        Map<String, String> bad = new java.util.HashMap<>(minimal());
        bad.put("sender.resend.uncertain.classes", "URGENT");
        assertThatThrownBy(() -> new SenderConfig(Settings.of(bad))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("sender.resend.uncertain.classes").hasMessageContaining("URGENT");
        Map<String, String> one = new java.util.HashMap<>(minimal());
        one.put("sender.penalty.bot.min.chats", "1");
        assertThatThrownBy(() -> new SenderConfig(Settings.of(one))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("sender.penalty.bot.min.chats").hasMessageContaining("1");
        Map<String, String> rate = new java.util.HashMap<>(minimal());
        rate.put("sender.breaker.failure.rate.percent", "150");
        assertThatThrownBy(() -> new SenderConfig(Settings.of(rate))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("sender.breaker.failure.rate.percent");
    }
}
