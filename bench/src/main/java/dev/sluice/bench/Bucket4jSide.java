package dev.sluice.bench;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.github.bucket4j.redis.lettuce.cas.LettuceBasedProxyManager;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.UUID;
import java.util.function.BooleanSupplier;

/**
 * {@code budget-vs-bucket4j}'s other side (split out of {@link BudgetVsBucket4j}, unchanged): Bucket4j's Lettuce CAS
 * backend on one connection (byte[] values), a bucket of the same rate and burst.
 *
 * <p>Thread-safe as Bucket4j's proxies and the shared Lettuce connection are; no state of its own after construction.
 */
final class Bucket4jSide implements AutoCloseable {
    private final RedisClient client;
    private final StatefulRedisConnection<String, byte[]> connection;
    private final LettuceBasedProxyManager<String> proxyManager;
    private final BucketConfiguration configuration;

    Bucket4jSide(String url, double rate, int burst) {
        this.client = RedisClient.create(url);
        // the same client options as Sluice's budget connection (RedisGcraBudget): commands rejected while
        // disconnected, no per-command timer task (a synchronous caller bounds its own wait)
        client.setOptions(ClientOptions.builder()
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.builder().timeoutCommands(false).build())
                .build());
        this.connection = client.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
        this.proxyManager = Bucket4jLettuce.casBasedBuilder(connection)
                .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
                .build();
        // refill rate tokens per second, greedily (continuously), capacity = burst: the same limit as GCRA(rate, burst)
        long perSecond = Math.round(rate);
        this.configuration = BucketConfiguration.builder()
                .addLimit(l -> l.capacity(burst).refillGreedy(perSecond, Duration.ofSeconds(1)))
                .build();
    }

    BooleanSupplier decider(String suffix) {
        BucketProxy bucket = proxyManager.builder().build("bench-b4j-" + suffix + "-" + UUID.randomUUID(), () -> configuration);
        return () -> bucket.tryConsume(1);
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown();
    }
}
