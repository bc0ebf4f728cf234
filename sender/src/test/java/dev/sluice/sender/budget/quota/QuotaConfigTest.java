package dev.sluice.sender.budget.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.config.ConfigException;
import dev.sluice.config.Settings;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class QuotaConfigTest {
    private static final String URL = "jdbc:postgresql://db:5432/sluice";

    @Test
    void reads_limits_and_windows_per_key() {
        QuotaConfig c = QuotaConfig.from(Settings.of(Map.of("quota.jdbc.url", URL, "quota.sms-api.limit", "10000",
                "quota.llm.limit", "500", "quota.llm.window.ms", "60000", "quota.lease.size", "25")));
        assertThat(c.limitFor("sms-api")).contains(new QuotaConfig.QuotaLimit(10_000, Duration.ofDays(1)));
        assertThat(c.limitFor("llm")).contains(new QuotaConfig.QuotaLimit(500, Duration.ofMinutes(1)));
        assertThat(c.limitFor("alerts")).isEmpty();
        assertThat(c.leaseSize()).isEqualTo(25);
        assertThat(c.table()).isEqualTo("sluice_quota");
    }

    @Test
    void errors_name_key_and_value_and_never_the_password() {
        assertThatThrownBy(() -> QuotaConfig.from(Settings.of(Map.of("quota.jdbc.url", "jdbc:mysql://x"))))
                .isInstanceOf(ConfigException.class).hasMessageContaining("quota.jdbc.url").hasMessageContaining("jdbc:mysql://x");
        assertThatThrownBy(() -> QuotaConfig.from(Settings.of(Map.of("quota.jdbc.url", URL, "quota.sms.limit", "0"))))
                .isInstanceOf(ConfigException.class).hasMessageContaining("quota.sms.limit");
        assertThatThrownBy(() -> QuotaConfig.from(Settings.of(Map.of("quota.jdbc.url", URL, "quota.sms.window.ms", "1000"))))
                .isInstanceOf(ConfigException.class).hasMessageContaining("quota.sms.window.ms");
        assertThatThrownBy(() -> QuotaConfig.from(Settings.of(Map.of("quota.jdbc.url", URL, "quota.table", "x; drop"))))
                .isInstanceOf(ConfigException.class).hasMessageContaining("quota.table");
        QuotaConfig c = QuotaConfig.from(Settings.of(Map.of("quota.jdbc.url", URL + "?password=hunter2",
                "quota.jdbc.user", "app", "quota.jdbc.password", "hunter2")));
        assertThat(c.toString()).doesNotContain("hunter2").contains("[redacted]");
    }
}
