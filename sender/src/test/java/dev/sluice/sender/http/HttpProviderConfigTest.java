package dev.sluice.sender.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.config.ConfigException;
import dev.sluice.config.Settings;
import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetLimits;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HttpProviderConfigTest {
    private static final String SECRET = "sk_live_" + "abcdef0123456789";

    static Map<String, String> sms() {
        Map<String, String> m = new HashMap<>();
        m.put("provider.sms-api.url.template", "https://sms.example.com/v1/messages");
        m.put("provider.sms-api.header.Authorization", "Bearer " + SECRET);
        m.put("provider.sms-api.header.X-Tenant", "{token}");
        m.put("provider.sms-api.body.template", "{\"to\":\"{chat}\",\"text\":\"{text}\"}");
        m.put("provider.sms-api.limit.key", "ext:sms-api:prod");
        m.put("provider.sms-api.rate.per.s", "5");
        m.put("provider.sms-api.burst", "2");
        m.put("provider.sms-api.retry.after.json.field", "reset");
        m.put("provider.sms-api.backoff.base.ms", "200");
        m.put("provider.sms-api.backoff.max.ms", "5000");
        m.put("provider.sms-api.response.expected.status", "200");
        m.put("provider.sms-api.response.content.type", "application/json");
        m.put("provider.sms-api.response.json.pointer", "/id");
        m.put("provider.sms-api.response.min.bytes", "8");
        return m;
    }

    private static Map<String, HttpProviderConfig> read(Map<String, String> m) {
        return HttpProviderConfig.all(Settings.of(m));
    }

    @Test
    void reads_every_key() {
        HttpProviderConfig p = read(sms()).get("sms-api");
        assertThat(p.method()).isEqualTo("POST");
        assertThat(p.limitKey()).isEqualTo("ext:sms-api:prod");
        assertThat(p.limits()).isEqualTo(new BudgetLimits(5, 2, 5, 2, 300, 2));
        assertThat(p.retryAfterJsonPointer()).isEqualTo("/reset");
        assertThat(p.retryAfterFormat()).isEqualTo(HttpProviderConfig.RetryAfterFormat.DELTA_SECONDS);
        assertThat(p.backoff()).isEqualTo(new FullJitterBackoff(Duration.ofMillis(200), Duration.ofSeconds(5)));
        assertThat(p.responseCheck()).isEqualTo(new ResponseCheck(200, "application/json", "/id", 8));
        assertThat(p.headers()).containsKeys("Authorization", "X-Tenant", "content-type");
        assertThat(p.body().encoding()).as("JSON by default").isEqualTo(Template.Encoding.JSON);
    }

    @Test
    void defaults_a_get_with_no_body_and_the_limit_key_ext_id() {
        HttpProviderConfig p = read(Map.of("provider.hook.url.template", "http://127.0.0.1:9/hook?to={chat}",
                "provider.hook.method", "get", "provider.hook.rate.per.s", "2")).get("hook");
        assertThat(p.method()).isEqualTo("GET");
        assertThat(p.limitKey()).isEqualTo("ext:hook");
        assertThat(p.burst()).isEqualTo(1);
        assertThat(p.body()).isNull();
        assertThat(p.responseCheck()).isEqualTo(ResponseCheck.ANY_2XX);
    }

    @Test
    void header_secrets_never_appear_in_to_string_or_errors() {
        Map<String, String> m = sms();
        assertThat(read(m).get("sms-api").toString()).doesNotContain(SECRET).doesNotContain("/v1/messages")
                .contains("sms.example.com", "ext:sms-api:prod", "Authorization");
        m.put("provider.sms-api.header.Bad Name", SECRET);
        assertThatThrownBy(() -> read(m)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("provider.sms-api.header.Bad Name").hasMessageNotContaining(SECRET);
        m.remove("provider.sms-api.header.Bad Name");
        m.put("provider.sms-api.header.X-Two", SECRET + "\r\nX-Injected: 1");
        assertThatThrownBy(() -> read(m)).hasMessageContaining("line break").hasMessageNotContaining(SECRET);
    }

    @Test
    void errors_name_key_and_value() {
        assertError("provider.sms-api.url.template", "ftp://x.example/", "provider.sms-api.url.template", "ftp://x.example/");
        assertError("provider.sms-api.url.template", "/relative", "provider.sms-api.url.template", "/relative");
        assertError("provider.sms-api.method", "DELETE", "provider.sms-api.method", "DELETE");
        assertError("provider.sms-api.rate.per.s", "-1", "provider.sms-api.rate.per.s", "-1");
        assertError("provider.sms-api.burst", "0", "provider.sms-api.burst", "0");
        assertError("provider.sms-api.backoff.max.ms", "100", "provider.sms-api.backoff.max.ms", "100");
        assertError("provider.sms-api.response.expected.status", "404", "provider.sms-api.response.expected.status", "404");
        assertError("provider.sms-api.retry.after.json.format", "weeks", "provider.sms-api.retry.after.json.format", "weeks");
        assertError("provider.sms-api.body.template", "{\"text\":{text}}", "provider.sms-api.body.template", "{text}");
        assertError("provider.sms-api.body.template", "{\"to\":\"{phone}\"}", "provider.sms-api.body.template", "{phone}");
        assertError("provider.sms-api.limit.key", "ext:{sms}", "provider.sms-api.limit.key", "ext:{sms}");
        assertError("provider.sms-api.limit.key", "sms.example.com:prod", "provider.sms-api.limit.key", "not the host");
        assertError("provider.sms-api.rate.per.sec", "5", "provider.sms-api.rate.per.sec", "unknown config");
        assertError("provider.sms-api.header.Host", "sms.example.com", "provider.sms-api.header.Host", "HTTP client");
    }

    @Test
    void required_keys_and_a_get_with_a_body() {
        Map<String, String> m = sms();
        m.remove("provider.sms-api.rate.per.s");
        assertThatThrownBy(() -> read(m)).isInstanceOf(ConfigException.class)
                .extracting(e -> ((ConfigException) e).key()).isEqualTo("provider.sms-api.rate.per.s");
        Map<String, String> n = sms();
        n.remove("provider.sms-api.url.template");
        assertThatThrownBy(() -> read(n)).hasMessageContaining("provider.sms-api.url.template");
        assertError("provider.sms-api.method", "GET", "provider.sms-api.method", "body.template");
        assertThatThrownBy(() -> read(Map.of("provider.bad.id.x", "1"))).isInstanceOf(ConfigException.class);
    }

    @Test
    void providers_sharing_a_limit_key_must_agree_on_its_limits() {
        Map<String, String> m = sms();
        m.put("provider.sms-eu.url.template", "https://eu.sms.example.com/v1/messages");
        m.put("provider.sms-eu.limit.key", "ext:sms-api:prod");
        m.put("provider.sms-eu.rate.per.s", "5");
        m.put("provider.sms-eu.burst", "2");
        assertThat(read(m)).containsOnlyKeys("sms-api", "sms-eu");
        m.put("provider.sms-eu.rate.per.s", "10");
        assertThatThrownBy(() -> read(m)).isInstanceOf(ConfigException.class).hasMessageContaining("ext:sms-api:prod");
    }

    @Test
    void provider_limits_go_into_the_budget_under_the_id_and_the_limit_key() {
        BudgetConfig budget = HttpProviderConfig.withProviderLimits(BudgetConfig.of(BudgetLimits.telegramDefaults()),
                read(sms()));
        assertThat(budget.limitsFor("sms-api").globalRatePerS()).isEqualTo(5);
        assertThat(budget.limitsFor("ext:sms-api:prod").globalBurst()).isEqualTo(2);
        assertThat(budget.limitsFor("alerts")).isEqualTo(BudgetLimits.telegramDefaults());
        assertThat(budget.fallbackShare().limitsFor("ext:sms-api:prod").globalRatePerS()).isEqualTo(5d / 3);
    }

    private static void assertError(String key, String value, String expectedKey, String expectedText) {
        Map<String, String> m = sms();
        m.put(key, value);
        assertThatThrownBy(() -> read(m)).isInstanceOf(ConfigException.class)
                .hasMessageContaining(expectedText)
                .satisfies(e -> assertThat(((ConfigException) e).key()).isEqualTo(expectedKey));
    }

    @Test
    void the_sender_config_reads_providers_as_bots_whose_token_is_the_api_key() {
        Map<String, String> m = sms();
        m.put("bootstrap.servers", "localhost:9092");
        m.put("schema.registry.url", "http://localhost:8081");
        m.put("redis.url", "redis://localhost:6379");
        m.put("bot.alerts.token", "123456789:" + "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw");
        assertThatThrownBy(() -> dev.sluice.sender.SenderConfig.from(Settings.of(m)))
                .isInstanceOf(ConfigException.class).hasMessageContaining("bot.sms-api.token")
                .satisfies(e -> assertThat(((ConfigException) e).key()).isEqualTo("bot.sms-api.token"));
        m.put("bot.sms-api.token", "key-" + "0123456789");
        dev.sluice.sender.SenderConfig c = dev.sluice.sender.SenderConfig.from(Settings.of(m));
        assertThat(c.providers()).containsOnlyKeys("sms-api");
        assertThat(c.bots()).containsKeys("alerts", "sms-api");
        // read from settings: budget.global.arrival.margin.ms (default 50) applies to a provider's rate too
        assertThat(c.budgetConfig().limitsFor("ext:sms-api:prod").globalRatePerS()).isCloseTo(5 * 1000 / 1050d,
                org.assertj.core.api.Assertions.within(1e-9));
        assertThat(c.budgetConfig().limitsFor("alerts").globalRatePerS()).isCloseTo(30 * 1000 / 1050d,
                org.assertj.core.api.Assertions.within(1e-9));
        assertThat(c.toString()).contains("ext:sms-api:prod").doesNotContain(SECRET).doesNotContain("0123456789");
    }
}
