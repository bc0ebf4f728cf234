package dev.sluice.sender.budget;

import dev.sluice.config.ConfigKey;
import dev.sluice.config.ConfigKeySet;
import dev.sluice.sender.redis.RedisEndpoint;
import java.time.Duration;

/**
 * The Redis connection keys, defined once for the senders (the shared budget and the sent marks) and for
 * {@code BudgetClient}, which must decide in the same Redis. Constants only; nothing to own.
 */
public final class RedisConnectionConfig {
    public static final ConfigKey<String> URL = ConfigKey.string("redis.url", null,
            RedisConnectionConfig::isRedisUrl,
            "a redis://, rediss://, redis-sentinel://host:port,...#master, rediss-sentinel://, redis-cluster://host:port,... or "
                    + "rediss-cluster:// URL (a '%' in a password written as %25)",
            "the Redis of the shared budget and the sent marks: one server (redis://localhost:6379), a Sentinel set "
                    + "(redis-sentinel://h1:26379,h2:26379#mymaster) or a Redis Cluster (redis-cluster://h1:7000,h2:7001, "
                    + "any seed nodes); required in budget.mode=redis (the default)");
    public static final ConfigKey<Duration> COMMAND_TIMEOUT_MS = ConfigKey.positiveMillis("redis.command.timeout.ms",
            250, "bound on each Redis call (a budget decision, a sent-mark read or write); keep it short, an outage "
                    + "must open the budget's circuit fast");
    public static final ConfigKeySet KEYS = ConfigKeySet.of(URL, COMMAND_TIMEOUT_MS);

    private RedisConnectionConfig() {
    }

    private static boolean isRedisUrl(String v) {
        try {
            RedisEndpoint.parse(v);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
