package dev.sluice.sender.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.RedisCluster;
import dev.sluice.testkit.RedisNode;
import dev.sluice.testkit.RedisSentinels;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** One {@link RedisSession} on a real Redis Cluster and a real Sentinel set, through a failover of each. */
class RedisSessionIT {
    /** Returns the node's own view of a key: proves the script ran where the key lives. */
    private static final String SCRIPT = "redis.call('SET', KEYS[1], ARGV[1]) return redis.call('GET', KEYS[1])";
    private static ClientResources resources;

    @BeforeAll
    static void resources() {
        resources = DefaultClientResources.create();
    }

    @AfterAll
    static void shutdown() {
        resources.shutdown(0, 1, TimeUnit.SECONDS);
    }

    @Test
    void onAClusterEveryScriptCallIsRoutedByItsBotsSlotAndSurvivesAFailover() {
        try (RedisCluster cluster = RedisCluster.start(3, 1);
             RedisSession<String, String> session = RedisSession.connect(
                     RedisEndpoint.parse("redis-cluster://" + cluster.nodes().get(0).address()), StringCodec.UTF8,
                     Duration.ofSeconds(2), resources)) {
            assertThat(session.isCluster()).isTrue();
            RedisClusterCommands<String, String> redis = session.sync();
            String sha = redis.scriptLoad(SCRIPT);
            Set<Integer> primaries = new HashSet<>();
            for (String bot : List.of("alerts", "quakes", "billing", "news", "ops", "chat")) {
                String key = "sluice:{" + bot + "}:global";
                assertThat(evalsha(redis, sha, key, bot)).isEqualTo(bot);
                primaries.add(cluster.primaryOf(key).orElseThrow().port());
            }
            assertThat(primaries).as("the bots' slots live on different primaries").hasSizeGreaterThanOrEqualTo(2);
            redis.set("sluice:{alerts}:sent:m1", "SENT", SetArgs.Builder.px(60_000));
            assertThat(redis.get("sluice:{alerts}:sent:m1")).isEqualTo("SENT");

            String key = "sluice:{alerts}:global";
            RedisNode owner = cluster.primaryOf(key).orElseThrow();
            cluster.kill9(owner);
            RedisNode promoted = cluster.awaitPrimaryOf(key, owner, Duration.ofSeconds(20));
            // The session finds the promoted replica by itself; its script cache may be empty (NOSCRIPT → load).
            String answer = awaitAnswer(() -> evalsha(redis, sha, key, "after"), Duration.ofSeconds(20));
            assertThat(answer).isEqualTo("after");
            assertThat(cluster.primaryOf(key)).contains(promoted);
        }
    }

    @Test
    void throughSentinelTheSessionFollowsThePromotedReplica() {
        try (RedisSentinels set = RedisSentinels.start(1, 3);
             RedisSession<String, String> session = RedisSession.connect(RedisEndpoint.parse(set.url()), StringCodec.UTF8,
                     Duration.ofSeconds(2), resources)) {
            RedisClusterCommands<String, String> redis = session.sync();
            String sha = redis.scriptLoad(SCRIPT);
            assertThat(evalsha(redis, sha, "sluice:{alerts}:global", "before")).isEqualTo("before");

            RedisNode primary = set.primary().orElseThrow();
            primary.kill9();
            set.awaitFailover(primary, Duration.ofSeconds(30));
            String answer = awaitAnswer(() -> evalsha(redis, sha, "sluice:{alerts}:global", "after"), Duration.ofSeconds(30));
            assertThat(answer).isEqualTo("after");
        }
    }

    private static String evalsha(RedisClusterCommands<String, String> redis, String sha, String key, String value) {
        try {
            return redis.evalsha(sha, ScriptOutputType.VALUE, new String[] {key}, value);
        } catch (RedisNoScriptException e) {
            return redis.eval(SCRIPT, ScriptOutputType.VALUE, new String[] {key}, value); // loads it on that node
        }
    }

    /** Repeats {@code call} until it answers (commands fail fast while the session reconnects), bounded. */
    private static String awaitAnswer(java.util.function.Supplier<String> call, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        RedisException last = null;
        while (System.nanoTime() < deadline) {
            try {
                return call.get();
            } catch (RedisException e) {
                last = e;
            }
            try {
                Thread.sleep(100); // bounded retry of a failing command while the client reconnects
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        throw new AssertionError("no answer within " + timeout, last);
    }
}
