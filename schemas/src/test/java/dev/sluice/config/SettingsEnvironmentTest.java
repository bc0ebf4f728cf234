package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@code SLUICE_*} environment variables reach the keys they name: matched against the keys the process defines (dots
 * and dashes both become underscores), so a key with a dash ({@code a.retry-after.ms}) is reachable too; a variable no
 * defined key matches becomes the lower-case dotted key (family members such as {@code bot.<id>.token}), which the
 * caller then checks like any other key (app's {@code UnknownKeys}).
 */
class SettingsEnvironmentTest {
    private static final Set<String> DEFINED = Set.of("digest.flush.interval.ms", "provider.retry-after.max.ms");

    @Test
    void a_variable_sets_the_defined_key_whose_env_form_it_is_even_with_a_dash() {
        Settings s = Settings.empty().withEnvironment(Map.of("SLUICE_PROVIDER_RETRY_AFTER_MAX_MS", "500",
                "SLUICE_DIGEST_FLUSH_INTERVAL_MS", "100"), DEFINED);
        assertThat(s.asMap()).containsOnly(Map.entry("provider.retry-after.max.ms", "500"),
                Map.entry("digest.flush.interval.ms", "100"));
    }

    @Test
    void a_variable_no_defined_key_matches_becomes_the_dotted_key_for_the_callers_unknown_key_check() {
        Settings s = Settings.empty().withEnvironment(Map.of("SLUICE_BOT_ALERTS_TOKEN", "1:x", "SLUICE_DIGEST_FLUSH_INTERVL_MS", "5"),
                DEFINED);
        assertThat(s.asMap()).containsOnlyKeys("bot.alerts.token", "digest.flush.intervl.ms");
    }

    @Test
    void a_key_already_given_is_overridden_and_a_variable_two_defined_keys_share_is_refused() {
        Settings fromFile = Settings.of(Map.of("bot.alerts-v2.token", "placeholder"));
        assertThat(fromFile.withEnvironment(Map.of("SLUICE_BOT_ALERTS_V2_TOKEN", "2:y"), DEFINED).asMap())
                .containsOnly(Map.entry("bot.alerts-v2.token", "2:y"));
        assertThatThrownBy(() -> Settings.empty().withEnvironment(Map.of("SLUICE_A_B_C", "1"), List.of("a.b-c", "a.b.c")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("environment variable SLUICE_A_B_C could set 'a.b-c' or 'a.b.c'; set the key in --config FILE or with -D");
    }

    @Test
    void load_applies_the_defined_keys_too() {
        Settings s = Settings.load(null, Map.of("SLUICE_PROVIDER_RETRY_AFTER_MAX_MS", "7", "PATH", "/bin"), DEFINED);
        assertThat(s.asMap()).containsOnly(Map.entry("provider.retry-after.max.ms", "7"));
    }
}
