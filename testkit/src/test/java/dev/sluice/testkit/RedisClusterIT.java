package dev.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RedisClusterIT {

    @Test
    void formsThreePrimariesWithReplicasAndPromotesAReplicaAfterAKill9() throws Exception {
        try (RedisCluster cluster = RedisCluster.start(3, 1)) {
            assertThat(cluster.nodes()).hasSize(6);
            assertThat(cluster.primaries()).hasSize(3);

            // Keys of one bot share its hash tag; bots spread over the primaries.
            Set<Integer> ports = new HashSet<>();
            for (String bot : List.of("alerts", "quakes", "billing", "news", "ops", "chat")) {
                assertThat(cluster.slotOf("sluice:{" + bot + "}:global")).isEqualTo(cluster.slotOf("sluice:{" + bot + "}:chat:42"));
                ports.add(cluster.primaryOf("sluice:{" + bot + "}:global").orElseThrow().port());
            }
            assertThat(ports).as("six bots over three primaries").hasSizeGreaterThanOrEqualTo(2);

            String key = "sluice:{alerts}:global";
            RedisNode owner = cluster.primaryOf(key).orElseThrow();
            assertThat(owner.call("SET", key, "1")).isEqualTo("OK");
            RedisNode other = cluster.primaries().stream().filter(n -> n != owner).findFirst().orElseThrow();
            assertThatThrownBy(() -> other.call("GET", key)).hasMessageStartingWith("MOVED " + cluster.slotOf(key));

            cluster.kill9(owner);
            assertThat(owner.isRunning()).isFalse();
            RedisNode promoted = cluster.awaitPrimaryOf(key, owner, Duration.ofSeconds(20));
            assertThat(promoted).isNotSameAs(owner);
            assertThat(promoted.call("SET", key, "2")).isEqualTo("OK");
            // the other primaries kept serving their slots throughout
            assertThat(other.call("SET", "sluice:{" + slotKeyOn(cluster, other) + "}:x", "y")).isEqualTo("OK");
        }
    }

    /** A hash tag whose slot the given primary serves. */
    private static String slotKeyOn(RedisCluster cluster, RedisNode primary) {
        for (int i = 0; i < 10_000; i++) {
            String tag = "bot" + i;
            if (cluster.primaryOf("sluice:{" + tag + "}:x").filter(n -> n == primary).isPresent()) {
                return tag;
            }
        }
        throw new AssertionError("no tag found for " + primary);
    }
}
