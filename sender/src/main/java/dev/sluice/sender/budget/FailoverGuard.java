package dev.sluice.sender.budget;

import dev.sluice.sender.redis.PrimaryChangeWatch;
import dev.sluice.sender.redis.RedisSession;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.resource.ClientResources;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Redis budget's guard against what a failover and eviction do to its state, for one {@link RedisGcraBudget}:
 * <ul>
 *   <li>{@code budget.redis.failover.policy=drained-restart}: Redis replicates asynchronously, so a promoted replica
 *       (or a restarted server) may lack the old primary's last grants (TATs) and sent marks. Before a bot's first
 *       decision on a primary that changed ({@link PrimaryChangeWatch}), the bot starts drained there
 *       ({@link RedisGcraBudget#startDrained}): nothing for one burst plus max(1 s, the probe interval), on Redis
 *       server time, so the grants that may have been lost are not handed out again within the provider's second.
 *       Every process deciding for the bot drains it, each before its own first decision there; the drain keeps a
 *       later TAT, so they do not add up.</li>
 *   <li>{@code budget.redis.eviction.check}: at connect, each primary's {@code maxmemory-policy} other than
 *       {@code noeviction} is logged (warn) or refused (the budget does not decide there; the outage mode applies).</li>
 * </ul>
 * Thread-safe: the epochs are atomics; any sending thread calls {@link #beforeDecision}.
 */
final class FailoverGuard implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FailoverGuard.class);
    private final PrimaryChangeWatch watch;
    private final BudgetConfig.FailoverPolicy policy;
    private final RedisSession<byte[], byte[]> session;
    private final LongAdder drains = new LongAdder();

    /**
     * Checks the primaries' eviction policy, then watches for primary changes.
     *
     * @throws BudgetUnavailableException if the check refuses this Redis, or Redis cannot be asked
     */
    FailoverGuard(RedisSession<byte[], byte[]> session, ClientResources resources, BudgetConfig config) {
        this.session = session;
        this.policy = config.failoverPolicy();
        try {
            checkEviction(session, config.evictionCheck());
            this.watch = new PrimaryChangeWatch(resources, session.isCluster(), session.isCluster() ? null : runId());
        } catch (RedisException e) {
            throw new BudgetUnavailableException("budget: " + e.getMessage(), e);
        }
    }

    /** The server's run_id; null when INFO is not allowed (an ACL without +info): then changes are seen only as outages. */
    private String runId() {
        try {
            return RedisSession.fieldOf(session.sync().info("server"), "run_id").orElse(null);
        } catch (RedisCommandExecutionException e) {
            log.warn("cannot read INFO server ({}): a failover is noticed only when it is an outage", e.getMessage());
            return null;
        }
    }

    static void checkEviction(RedisSession<?, ?> session, BudgetConfig.EvictionCheck check) {
        if (check == BudgetConfig.EvictionCheck.OFF) {
            return;
        }
        Map<String, String> policies;
        try {
            policies = session.infoOfPrimaries("memory", "maxmemory_policy");
        } catch (RedisCommandExecutionException e) {
            log.warn("cannot read INFO memory ({}): maxmemory-policy not checked; it must be noeviction", e.getMessage());
            return;
        }
        for (Map.Entry<String, String> e : policies.entrySet()) {
            if (e.getValue().equals("noeviction")) {
                continue;
            }
            String why = "Redis at " + e.getKey() + " has maxmemory-policy=" + e.getValue() + ": when it is full it may "
                    + "evict budget TATs, penalty gates and sent marks (every Sluice key has a TTL, so volatile-* evicts "
                    + "them too), which means sends above the limit and messages sent twice; set maxmemory-policy "
                    + "noeviction (budget.redis.eviction.check=" + check.name().toLowerCase(java.util.Locale.ROOT) + ")";
            if (check == BudgetConfig.EvictionCheck.REFUSE) {
                throw new BudgetUnavailableException("refusing to decide in " + why, null);
            }
            log.warn(why);
        }
    }

    /**
     * Before a decision for a bot: if the primary serving {@code botKey} changed since this bot's last decision, and
     * the policy is drained-restart, drains the bot there first.
     *
     * @param seenEpoch the bot's last seen epoch (0 before its first decision: a bot first decided after a failover
     *                  is drained too)
     * @param drain     {@link RedisGcraBudget#startDrained} for the bot
     */
    void beforeDecision(String botId, byte[] botKey, AtomicLong seenEpoch, Runnable drain) {
        if (policy == BudgetConfig.FailoverPolicy.NONE) {
            return;
        }
        try {
            watch.recheck(this::runId);
        } catch (RedisException e) {
            watch.recheckLater();
            throw new BudgetUnavailableException("Redis budget: could not read the primary's run_id: " + e.getMessage(), e);
        }
        long epoch = watch.epochOf(botKey);
        long seen = seenEpoch.get();
        if (epoch != seen) {
            drain.run();
            if (seenEpoch.compareAndSet(seen, epoch)) {
                drains.increment();
                log.warn("the Redis primary serving bot {} changed (failover or restart): the bot starts drained there",
                        botId);
            }
        }
    }

    /** Bots drained after a primary change so far. */
    long drains() {
        return drains.sum();
    }

    /** Primary changes seen so far. */
    long primaryChanges() {
        return watch.changes();
    }

    @Override
    public void close() {
        watch.close();
    }
}
