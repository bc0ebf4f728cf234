package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RedisSentinelsIT {

    @Test
    void theSentinelsPromoteTheReplicaAfterTheMasterIsKilled() throws Exception {
        try (RedisSentinels set = RedisSentinels.start(1, 3)) {
            assertThat(set.url()).startsWith("redis-sentinel://127.0.0.1:").endsWith("#" + RedisSentinels.MASTER_NAME);
            RedisNode primary = set.primary().orElseThrow();
            assertThat(primary).isSameAs(set.dataNodes().get(0));
            assertThat(primary.call("SET", "k", "v")).isEqualTo("OK");

            primary.kill9();
            RedisNode promoted = set.awaitFailover(primary, Duration.ofSeconds(30));
            assertThat(promoted).isSameAs(set.dataNodes().get(1));
            assertThat(promoted.call("SET", "k", "v2")).isEqualTo("OK");
        }
    }
}
