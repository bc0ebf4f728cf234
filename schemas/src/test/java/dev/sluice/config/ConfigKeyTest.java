package dev.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A key defined once: its default, its rule on read and on check, its errors; and the sets derived from keys. */
class ConfigKeyTest {
    private static final ConfigKey<Double> HEADROOM = ConfigKey.number("budget.backfill.headroom", 0.2,
            h -> h >= 0 && h < 1, "0 <= h < 1", "share kept for live traffic");
    private static final ConfigKey<Duration> LATE = ConfigKey.millis("budget.reservation.late.max.ms", null,
            d -> !d.isNegative() && d.toMillis() <= 60_000, "0 <= ms <= 60000", "how late");
    private static final ConfigKey<Boolean> FLAG = ConfigKey.bool("sender.consume.backfill", true, "flag");

    private enum Mode { LOCAL_FALLBACK, FAIL_CLOSED }

    @Test
    void unset_or_blank_reads_the_default_and_a_value_is_parsed_and_checked() {
        assertThat(HEADROOM.read(Settings.empty())).isEqualTo(0.2);
        assertThat(HEADROOM.read(Settings.of(Map.of("budget.backfill.headroom", " ")))).isEqualTo(0.2);
        assertThat(HEADROOM.read(Settings.of(Map.of("budget.backfill.headroom", "0.5")))).isEqualTo(0.5);
        assertThat(LATE.read(Settings.empty())).as("no default").isNull();
        assertThat(LATE.read(Settings.of(Map.of("budget.reservation.late.max.ms", "3")))).isEqualTo(Duration.ofMillis(3));
        assertThat(FLAG.read(Settings.of(Map.of("sender.consume.backfill", "no")))).isFalse();
        ConfigKey<Mode> mode = ConfigKey.oneOf("budget.redis.outage.mode", Mode.class, Mode.LOCAL_FALLBACK, "mode");
        assertThat(mode.read(Settings.of(Map.of("budget.redis.outage.mode", "fail-closed")))).isEqualTo(Mode.FAIL_CLOSED);
        assertThat(mode.rule()).isEqualTo("one of local-fallback, fail-closed");
    }

    @Test
    void errors_name_the_key_its_environment_variable_the_value_and_the_rule() {
        assertThatThrownBy(() -> HEADROOM.read(Settings.of(Map.of("budget.backfill.headroom", "1.5"))))
                .isInstanceOf(ConfigException.class).hasMessageContaining("budget.backfill.headroom")
                .hasMessageContaining("SLUICE_BUDGET_BACKFILL_HEADROOM").hasMessageContaining("'1.5'")
                .hasMessageContaining("0 <= h < 1");
        assertThatThrownBy(() -> HEADROOM.read(Settings.of(Map.of("budget.backfill.headroom", "NaN"))))
                .hasMessageContaining("'NaN'");
        assertThatThrownBy(() -> LATE.read(Settings.of(Map.of("budget.reservation.late.max.ms", "soon"))))
                .hasMessageContaining("'soon'").hasMessageContaining("an integer");
        assertThatThrownBy(() -> FLAG.read(Settings.of(Map.of("sender.consume.backfill", "maybe"))))
                .hasMessageContaining("true or false");
        assertThatThrownBy(() -> LATE.require(Settings.empty())).hasMessageContaining("missing required config")
                .hasMessageContaining("budget.reservation.late.max.ms");
    }

    @Test
    void a_builder_value_is_checked_with_the_same_rule() {
        assertThat(HEADROOM.check(0.0)).isZero();
        assertThatThrownBy(() -> HEADROOM.check(1.0)).hasMessageContaining("budget.backfill.headroom")
                .hasMessageContaining("0 <= h < 1");
        assertThatThrownBy(() -> LATE.check(Duration.ofMinutes(2))).as("durations are shown in ms")
                .hasMessageContaining("'120000'");
    }

    @Test
    void a_set_lists_its_keys_accepts_its_families_and_refuses_a_second_definition_of_a_name() {
        ConfigFamily tokens = ConfigFamily.perId("bot.", "[a-z]+", ".token", "a bot's token");
        ConfigFamily kafka = ConfigFamily.prefix("kafka.", "pass-through");
        ConfigKeySet set = ConfigKeySet.of(List.of(HEADROOM, LATE), List.of(tokens)).plus(ConfigKeySet.of(FLAG))
                .plus(kafka);
        assertThat(set.names()).containsExactly("budget.backfill.headroom", "budget.reservation.late.max.ms",
                "sender.consume.backfill");
        assertThat(set.accepts("bot.alerts.token")).isTrue();
        assertThat(set.accepts("kafka.security.protocol")).isTrue();
        assertThat(set.accepts("kafka.")).isFalse();
        assertThat(set.accepts("bot..token")).isFalse();
        assertThat(set.accepts("budget.backfill.headroom.x")).isFalse();
        assertThat(set.plus(ConfigKeySet.of(HEADROOM)).names()).as("the same definition twice is one key").hasSize(3);
        ConfigKey<Double> other = ConfigKey.positiveNumber("budget.backfill.headroom", 0.3, "again");
        assertThatThrownBy(() -> set.plus(ConfigKeySet.of(other))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("budget.backfill.headroom").hasMessageContaining("defined twice");
    }
}
