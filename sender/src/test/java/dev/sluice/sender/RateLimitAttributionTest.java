package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.metrics.RateLimitScope;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RateLimitAttributionTest {
    private final RateLimitAttribution attribution = new RateLimitAttribution(Duration.ofSeconds(1), 2);
    private static final Duration THIRTY = Duration.ofSeconds(30);

    @Test
    void a_lone_429_is_the_chats_or_the_groups_own() {
        assertThat(attribution.attribute("b", "42", THIRTY, 0)).isEqualTo(RateLimitScope.CHAT);
        assertThat(attribution.attribute("b", "-100123", THIRTY, 5_000)).isEqualTo(RateLimitScope.GROUP);
        assertThat(attribution.attribute("b", "@news", THIRTY, 10_000)).isEqualTo(RateLimitScope.GROUP);
        assertThat(attribution.botGateUntilMs("b")).isZero();
    }

    @Test
    void two_chats_refused_within_the_window_mean_the_whole_bot_and_its_gate_follows_the_latest_refusal() {
        assertThat(attribution.attribute("b", "1", THIRTY, 1_000)).isEqualTo(RateLimitScope.CHAT);
        assertThat(attribution.attribute("b", "2", THIRTY, 1_900)).isEqualTo(RateLimitScope.GLOBAL);
        assertThat(attribution.botGateUntilMs("b")).isEqualTo(31_900);
        // a call that was in flight comes back refused: still the bot, and the gate moves with it
        assertThat(attribution.attribute("b", "3", THIRTY, 2_000)).isEqualTo(RateLimitScope.GLOBAL);
        assertThat(attribution.botGateUntilMs("b")).isEqualTo(32_000);
        // other bots are not affected
        assertThat(attribution.botGateUntilMs("other")).isZero();
        assertThat(attribution.attribute("other", "1", THIRTY, 2_000)).isEqualTo(RateLimitScope.CHAT);
    }

    @Test
    void refusals_further_apart_than_the_window_or_of_the_same_chat_stay_per_chat() {
        assertThat(attribution.attribute("b", "1", THIRTY, 0)).isEqualTo(RateLimitScope.CHAT);
        assertThat(attribution.attribute("b", "1", THIRTY, 500)).isEqualTo(RateLimitScope.CHAT);
        assertThat(attribution.attribute("b", "2", THIRTY, 1_501)).isEqualTo(RateLimitScope.CHAT);
        assertThat(attribution.botGateUntilMs("b")).isZero();
    }

    @Test
    void rejects_meaningless_settings() {
        assertThatThrownBy(() -> new RateLimitAttribution(Duration.ZERO, 2)).hasMessageContaining("window");
        assertThatThrownBy(() -> new RateLimitAttribution(Duration.ofSeconds(1), 1)).hasMessageContaining("minChats");
    }
}
