package dev.sluice.sender.budget.stack;

import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetListener;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.LimitKeyBudget;
import dev.sluice.sender.budget.LocalGcraBudget;
import dev.sluice.sender.budget.ResilientBudget;
import dev.sluice.sender.budget.quota.PostgresQuota;
import dev.sluice.sender.budget.quota.QuotaBudget;
import dev.sluice.sender.budget.quota.QuotaConfig;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The one place that assembles a process's budget, for the senders and for {@code BudgetClient} alike, from the
 * bottom up:
 * <ol>
 *   <li>the pacing: Redis behind the circuit breaker and outage mode ({@link ResilientBudget}), or the in-process
 *       {@link LocalGcraBudget} ({@code budget.mode=local}), or a given port;</li>
 *   <li>with {@code quota.jdbc.url}: the PostgreSQL quota on top ({@link QuotaBudget});</li>
 *   <li>with HTTP providers: their limit keys ({@link LimitKeyBudget}), outermost, so the quota and the pacing
 *       both see the key a budget belongs to.</li>
 * </ol>
 * Every layer keeps the capabilities of the one below (reservations, arrival guard, folded sent-mark check, round
 * trips; see {@link dev.sluice.sender.budget.ForwardingBudget}).
 *
 * <p>A builder used on one thread; the port it builds is thread-safe and owned by the caller (close it).
 */
public final class BudgetStack {
    private final BudgetConfig config;
    private String redisUrl;
    private Duration commandTimeout;
    private BudgetPort pacing;
    private BudgetListener listener = BudgetListener.NONE;
    private Clock clock = Clock.systemUTC();
    private MeterRegistry registry;
    private QuotaConfig quota;
    private Map<String, String> limitKeys = Map.of();

    private BudgetStack(BudgetConfig config) {
        this.config = Objects.requireNonNull(config, "config");
    }

    /** A stack deciding with {@code config}; in-process ({@link LocalGcraBudget}) unless {@link #redis} is set. */
    public static BudgetStack of(BudgetConfig config) {
        return new BudgetStack(config);
    }

    /** Decide in the Redis at {@code url} (shared by every replica), each command bounded by {@code commandTimeout}. */
    public BudgetStack redis(String url, Duration commandTimeout) {
        this.redisUrl = Objects.requireNonNull(url, "redisUrl");
        this.commandTimeout = Objects.requireNonNull(commandTimeout, "commandTimeout");
        return this;
    }

    /** Pace with this port instead of Redis or the in-process budget (tests, an embedding that owns its budget). */
    public BudgetStack pacing(BudgetPort port) {
        this.pacing = Objects.requireNonNull(port, "pacing");
        return this;
    }

    /** Redis errors and budget-state changes (metrics). */
    public BudgetStack listener(BudgetListener listener) {
        this.listener = Objects.requireNonNull(listener, "listener");
        return this;
    }

    /** The clock of the in-process budget and of the outage fallback; Redis decides on its own time. */
    public BudgetStack clock(Clock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
        return this;
    }

    /** Where Lettuce's command latencies go (tag {@code client=budget}); none when not set. */
    public BudgetStack registry(MeterRegistry registry) {
        this.registry = registry;
        return this;
    }

    /** Quota mode when present ({@code quota.jdbc.url} set). */
    public BudgetStack quota(Optional<QuotaConfig> quota) {
        this.quota = quota.orElse(null);
        return this;
    }

    /** Bot (HTTP provider) id → the budget key it decides under ({@code provider.<id>.limit.key}). */
    public BudgetStack limitKeys(Map<String, String> keyByBot) {
        this.limitKeys = Map.copyOf(keyByBot);
        return this;
    }

    /** Builds the port; connects to Redis lazily (a process starts while Redis is down). */
    public BudgetPort build() {
        BudgetPort port = pacing != null ? pacing
                : redisUrl != null ? ResilientBudget.connect(redisUrl, config, commandTimeout, listener, clock, registry)
                : new LocalGcraBudget(config, clock);
        if (quota != null) {
            // PostgreSQL holds the contractual cap, even while Redis (the pacing) is down.
            port = new QuotaBudget(port, new PostgresQuota(quota));
        }
        return LimitKeyBudget.wrap(port, limitKeys);
    }
}
