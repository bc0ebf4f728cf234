package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Issue 19: many-bots counts Redis round trips with {@link RedisProbe#monitor}. Every class of command the sender's
 * Lettuce clients send must count: a plain GET and SET, an EVALSHA (its script's calls apart, as script-internal), each
 * command of a pipeline, and a MULTI/EXEC transaction. Real redis-server, real Lettuce client.
 */
class RedisProbeIT {
    @Test
    void monitorCountsEveryClientCommandClassAndScriptCallsApart() throws Exception {
        try (RedisInstance redis = RedisLauncher.localProcess().launch()) {
            RedisClient client = RedisClient.create(redis.url());
            try (StatefulRedisConnection<String, String> c = client.connect()) {
                RedisCommands<String, String> sync = c.sync();
                String sha = sync.scriptLoad("redis.call('set', KEYS[1], '1'); return redis.call('get', KEYS[1])");
                RedisProbe probe = new RedisProbe(redis.host(), redis.port());
                CompletableFuture<RedisProbe.MonitorSample> sample = CompletableFuture.supplyAsync(() -> {
                    try {
                        return probe.monitor(3000);
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                // a condition, not a sleep: MONITOR runs once redis-server lists a client with the monitor flag
                Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> sync.clientList().contains("flags=O"));

                sync.set("a", "1");
                sync.get("a");
                sync.evalsha(sha, ScriptOutputType.VALUE, "b");
                c.setAutoFlushCommands(false); // a pipeline: three commands written in one flush
                List<RedisFuture<?>> pipelined = List.of(c.async().set("p", "1"), c.async().get("p"), c.async().incr("q"));
                c.flushCommands();
                assertThat(LettuceFutures.awaitAll(10, TimeUnit.SECONDS, pipelined.toArray(RedisFuture[]::new))).isTrue();
                c.setAutoFlushCommands(true);
                sync.multi();
                sync.set("x", "1");
                sync.exec();

                RedisProbe.MonitorSample s = sample.get(20, TimeUnit.SECONDS);
                Map<String, Long> by = s.byCommand();
                assertThat(by).containsEntry("set", 3L).containsEntry("get", 2L).containsEntry("evalsha", 1L)
                        .containsEntry("incr", 1L).containsEntry("multi", 1L).containsEntry("exec", 1L);
                assertThat(s.clientCommands()).isEqualTo(by.values().stream().mapToLong(Long::longValue).sum());
                assertThat(s.scriptCalls()).as("the script's SET and GET, apart from client commands").isEqualTo(2);
            } finally {
                client.shutdown();
            }
        }
    }
}
