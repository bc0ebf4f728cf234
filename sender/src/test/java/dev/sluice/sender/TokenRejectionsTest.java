package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class TokenRejectionsTest {

    @Test
    void a_rejected_bot_is_parked_until_the_recheck_where_exactly_one_caller_probes() {
        TokenRejections t = new TokenRejections(Duration.ofSeconds(60));
        assertThat(t.parkedUntil("a", 1_000)).as("not rejected: go").isZero();
        assertThat(t.reject("a", 401, "Unauthorized", 1_000)).isEqualTo(61_000);
        assertThat(t.isRejected("a")).isTrue();
        assertThat(t.rejectedBots()).containsExactly("a");
        assertThat(t.parkedUntil("a", 30_000)).isEqualTo(61_000);
        assertThat(t.parkedUntil("b", 30_000)).as("other bots unaffected").isZero();
        assertThat(t.parkedUntil("a", 61_000)).as("the probe").isZero();
        assertThat(t.parkedUntil("a", 61_001)).as("the others wait one more period").isEqualTo(121_000);
        t.reject("a", 401, "Unauthorized", 61_050); // the probe was rejected again
        assertThat(t.parkedUntil("a", 62_000)).isEqualTo(121_050);
        t.accepted("a");
        assertThat(t.isRejected("a")).isFalse();
        assertThat(t.parkedUntil("a", 62_000)).isZero();
    }
}
