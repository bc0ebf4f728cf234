package dev.sluice.sender.telegram;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.sender.provider.SendOutcome;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryAfterCapTest {

    @Test
    void a_longer_wait_is_cut_to_the_cap_and_shorter_ones_and_other_outcomes_pass() {
        RetryAfterCap cap = new RetryAfterCap(Duration.ofHours(1));
        SendOutcome years = new SendOutcome.RetryAfter(Duration.ofSeconds(2_147_483_647L), SendOutcome.PenaltyScope.BOT, "429");
        SendOutcome.RetryAfter capped = (SendOutcome.RetryAfter) cap.apply(years);
        assertThat(capped.retryAfter()).isEqualTo(Duration.ofHours(1));
        assertThat(capped.scope()).isEqualTo(SendOutcome.PenaltyScope.BOT);
        assertThat(capped.description()).contains("capped");
        SendOutcome short429 = new SendOutcome.RetryAfter(Duration.ofSeconds(3), SendOutcome.PenaltyScope.CHAT, "429");
        assertThat(cap.apply(short429)).isSameAs(short429);
        SendOutcome ok = new SendOutcome.Delivered(1);
        assertThat(cap.apply(ok)).isSameAs(ok);
        assertThat(RetryAfterCap.clampPenalty(Duration.ofDays(365))).isEqualTo(RetryAfterCap.MAX_SETTING);
        assertThat(RetryAfterCap.clampPenalty(Duration.ZERO)).isEqualTo(Duration.ofMillis(1));
        assertThatThrownBy(() -> new RetryAfterCap(Duration.ofDays(2))).isInstanceOf(IllegalArgumentException.class);
    }
}
