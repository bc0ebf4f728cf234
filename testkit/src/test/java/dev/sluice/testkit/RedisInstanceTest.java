package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;

import org.junit.jupiter.api.Test;

class RedisInstanceTest {

    @Test
    void externalUrlIsUsedAsIsAndNeverStopped() {
        RedisInstance redis = RedisInstance.external(URI.create("redis://:pw123@redis.example:6380"));
        assertThat(redis.host()).isEqualTo("redis.example");
        assertThat(redis.port()).isEqualTo(6380);
        assertThat(redis.url()).isEqualTo("redis://redis.example:6380");
        assertThat(redis.password()).contains("pw123");
        assertThat(redis.toString()).doesNotContain("pw123");
        assertThat(redis.isManaged()).isFalse();
        assertThatThrownBy(redis::stop).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(redis::restart).isInstanceOf(UnsupportedOperationException.class);
        redis.close(); // leaves the external server alone, no error
    }

    @Test
    void defaultPortIs6379() {
        assertThat(RedisInstance.external(URI.create("redis://localhost")).port()).isEqualTo(6379);
    }

    @Test
    void rejectsBadPasswords() {
        assertThatThrownBy(() -> RedisLauncher.withPassword("a b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("password");
    }
}
