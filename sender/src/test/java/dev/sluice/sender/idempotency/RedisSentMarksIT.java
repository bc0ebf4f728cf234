package dev.sluice.sender.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Sent marks against a real redis-server that is down when the sender starts: construction succeeds (the
 * sender must start during a Redis outage), calls fail as {@link SentMarksUnavailableException} while it is
 * down, and the same instance works once Redis is up.
 */
class RedisSentMarksIT {

    @Test
    void starts_while_redis_is_down_and_works_once_it_is_up() {
        try (RedisInstance redis = RedisLauncher.localProcess().launch()) {
            String url = redis.url();
            redis.stop();
            try (RedisSentMarks marks = new RedisSentMarks(url, Duration.ofMinutes(5), Duration.ofMillis(500))) {
                assertThatThrownBy(() -> marks.get("alerts", "m-1")).isInstanceOf(SentMarksUnavailableException.class);
                marks.markResultWritten("alerts", "m-1"); // best effort: logged, never thrown

                redis.restart();
                assertThat(marks.get("alerts", "m-1").state()).isEqualTo(SentMarks.State.NONE);
                marks.markSent("alerts", "m-1", "DELIVERED", 42L);
                SentMarks.Mark mark = marks.get("alerts", "m-1");
                assertThat(mark.state()).isEqualTo(SentMarks.State.SENT);
                assertThat(mark.providerMessageId()).isEqualTo(42L);
            }
        }
    }
}
