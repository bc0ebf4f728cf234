package dev.sluice.sender.budget;

import dev.sluice.config.ConfigKey;
import dev.sluice.config.ConfigKeySet;
import java.time.Duration;

/**
 * The Redis connection keys, defined once for the senders (the shared budget and the sent marks) and for
 * {@code BudgetClient}, which must decide in the same Redis. Constants only; nothing to own.
 */
public final class RedisConnectionConfig {
    public static final ConfigKey<String> URL = ConfigKey.string("redis.url", null,
            v -> v.startsWith("redis://") || v.startsWith("rediss://") || v.startsWith("redis-sentinel://"),
            "a redis:// or rediss:// URL", "the Redis of the shared budget and the sent marks, e.g. "
                    + "redis://localhost:6379; required in budget.mode=redis (the default)");
    public static final ConfigKey<Duration> COMMAND_TIMEOUT_MS = ConfigKey.positiveMillis("redis.command.timeout.ms",
            250, "bound on each Redis call (a budget decision, a sent-mark read or write); keep it short, an outage "
                    + "must open the budget's circuit fast");
    public static final ConfigKeySet KEYS = ConfigKeySet.of(URL, COMMAND_TIMEOUT_MS);

    private RedisConnectionConfig() {
    }
}
