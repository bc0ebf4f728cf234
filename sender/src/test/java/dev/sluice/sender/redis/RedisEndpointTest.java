package dev.sluice.sender.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Test;

class RedisEndpointTest {
    private static final String SECRET = "pa%zz/s@cret";

    @Test
    void aServerUrlIsStandalone() {
        RedisEndpoint e = RedisEndpoint.parse("redis://:s3cret@redis:6380/2");
        assertThat(e.topology()).isEqualTo(RedisEndpoint.Topology.STANDALONE);
        assertThat(e.uris()).singleElement().satisfies(u -> {
            assertThat(u.getPort()).isEqualTo(6380);
            assertThat(u.getDatabase()).isEqualTo(2);
        });
        assertThat(e.toString()).doesNotContain("s3cret").contains("[redacted]@redis:6380");
    }

    @Test
    void sentinelUrlsWithAndWithoutTlsNameTheirMaster() {
        RedisEndpoint plain = RedisEndpoint.parse("redis-sentinel://127.0.0.1:26379,127.0.0.1:26380#sluice");
        assertThat(plain.topology()).isEqualTo(RedisEndpoint.Topology.SENTINEL);
        assertThat(plain.uris().get(0).getSentinels()).hasSize(2);
        assertThat(plain.uris().get(0).getSentinelMasterId()).isEqualTo("sluice");
        RedisEndpoint tls = RedisEndpoint.parse("rediss-sentinel://:pw@10.0.0.1:26379#sluice");
        assertThat(tls.uris().get(0).isSsl()).isTrue();
        assertThatThrownBy(() -> RedisEndpoint.parse("redis-sentinel://:pw@10.0.0.1:26379"))
                .hasMessageContaining("names its master").hasMessageNotContaining("pw@");
    }

    @Test
    void aClusterUrlGivesEverySeedTheCredentialsAndTls() {
        RedisEndpoint e = RedisEndpoint.parse("rediss-cluster://app:s3cret@h1:7000,h2:7001,h3?verifyPeer=NONE");
        assertThat(e.topology()).isEqualTo(RedisEndpoint.Topology.CLUSTER);
        assertThat(e.uris()).extracting(RedisURI::getHost).containsExactly("h1", "h2", "h3");
        assertThat(e.uris()).extracting(RedisURI::getPort).containsExactly(7000, 7001, 6379);
        assertThat(e.uris()).allSatisfy(u -> {
            assertThat(u.isSsl()).isTrue();
            assertThat(u.isVerifyPeer()).isFalse();
        });
        assertThat(e.redacted()).isEqualTo("rediss-cluster://[redacted]@h1:7000,h2:7001,h3?verifyPeer=NONE");
        assertThat(e.leaksCredentials("AUTH failed for s3cret")).isTrue();
        assertThat(e.leaksCredentials("connection refused")).isFalse();
        assertThat(RedisEndpoint.parse("redis-cluster://h1:7000").uris().get(0).isSsl()).isFalse();
    }

    @Test
    void errorsNeverRepeatThePassword() {
        for (String bad : new String[] {"redis://:" + SECRET + "@redis:6379", "http://:" + SECRET + "@redis:6379",
                "redis-cluster://:" + SECRET + "@h1:7000?timeout=5", "redis-cluster://:" + SECRET + "@:7000"}) {
            assertThatThrownBy(() -> RedisEndpoint.parse(bad)).isInstanceOf(IllegalArgumentException.class)
                    .satisfies(t -> assertThat(t.getMessage()).doesNotContain("zz", "cret").contains("[redacted]"));
        }
    }
}
