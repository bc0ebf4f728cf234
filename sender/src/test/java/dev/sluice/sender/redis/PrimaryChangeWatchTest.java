package dev.sluice.sender.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.event.ClusterTopologyChangedEvent;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode.NodeFlag;
import io.lettuce.core.event.connection.ConnectionActivatedEvent;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Epochs from the events Lettuce publishes: per slot on a cluster, by run_id on a server or Sentinel set. */
class PrimaryChangeWatchTest {
    private final ClientResources resources = DefaultClientResources.create();

    @AfterEach
    void shutdown() {
        resources.shutdown(0, 1, TimeUnit.SECONDS);
    }

    private static RedisClusterNode node(String id, int fromSlot, int toSlot, NodeFlag... flags) {
        List<Integer> slots = IntStream.rangeClosed(fromSlot, toSlot).boxed().toList();
        return new RedisClusterNode(RedisURI.create("redis://127.0.0.1:7000"), id, true, null, 0, 0, 0, slots,
                Set.of(flags));
    }

    @Test
    void onAClusterOnlyTheSlotsOfAPromotedReplicaAdvance() {
        try (PrimaryChangeWatch watch = new PrimaryChangeWatch(resources, true, null)) {
            String moved = "sluice:{alerts}:global";
            String stayed = IntStream.range(0, 1000).mapToObj(i -> "sluice:{bot" + i + "}:global")
                    .filter(k -> SlotHash.getSlot(k) > 10_000).findFirst().orElseThrow();
            int slot = SlotHash.getSlot(moved);
            assertThat(slot).isLessThan(10_000);
            List<RedisClusterNode> before = List.of(node("a", 0, 10_000, NodeFlag.UPSTREAM),
                    node("b", 10_001, 16_383, NodeFlag.UPSTREAM));
            // the failed primary still owns its slots: no change yet
            List<RedisClusterNode> failed = List.of(node("a", 0, 10_000, NodeFlag.UPSTREAM, NodeFlag.FAIL),
                    node("b", 10_001, 16_383, NodeFlag.UPSTREAM));
            List<RedisClusterNode> after = List.of(node("a2", 0, 10_000, NodeFlag.UPSTREAM),
                    node("b", 10_001, 16_383, NodeFlag.UPSTREAM));
            resources.eventBus().publish(new ClusterTopologyChangedEvent(before, failed));
            resources.eventBus().publish(new ClusterTopologyChangedEvent(failed, after));
            await().atMost(Duration.ofSeconds(5)).until(() -> watch.changes() == 1);
            assertThat(watch.epochOf(moved)).isEqualTo(1);
            assertThat(watch.epochOf(stayed)).isZero();
        }
    }

    @Test
    void onAServerANewRunIdAfterAReconnectAdvancesTheEpoch() {
        AtomicInteger asked = new AtomicInteger();
        try (PrimaryChangeWatch watch = new PrimaryChangeWatch(resources, false, "run-1")) {
            watch.recheck(() -> {
                asked.incrementAndGet();
                return "run-1";
            });
            assertThat(asked).hasValue(0); // nothing happened: no INFO
            InetSocketAddress a = new InetSocketAddress("127.0.0.1", 6379);
            resources.eventBus().publish(new ConnectionActivatedEvent(a, a));
            await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
                watch.recheck(() -> {
                    asked.incrementAndGet();
                    return "run-1";
                });
                assertThat(asked).hasValue(1);
            });
            assertThat(watch.epochOf("sluice:{alerts}:global")).isZero(); // same server, reconnected

            resources.eventBus().publish(new ConnectionActivatedEvent(a, a));
            await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
                watch.recheck(() -> "run-2");
                assertThat(watch.epochOf("sluice:{alerts}:global")).isEqualTo(1);
            });
        }
    }
}
