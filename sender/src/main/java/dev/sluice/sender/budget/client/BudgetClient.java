package dev.sluice.sender.budget.client;

import dev.sluice.avro.Lane;
import dev.sluice.config.ConfigKey;
import dev.sluice.config.ConfigKeySet;
import dev.sluice.config.Settings;
import dev.sluice.metrics.BudgetState;
import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetKeys;
import dev.sluice.sender.budget.BudgetLimits;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.PenaltyScope;
import dev.sluice.sender.budget.RedisConnectionConfig;
import dev.sluice.sender.budget.ResilientBudget;
import dev.sluice.sender.budget.quota.QuotaConfig;
import dev.sluice.sender.budget.stack.BudgetStack;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The shared provider budget for any Java caller outside the pipeline (a nightly backfill job, an SMS or
 * payments client, a script): the SAME {@code budget.lua} on the SAME Redis keys
 * ({@link BudgetKeys}) as the senders, so the job and the live senders spend one budget together.
 *
 * <pre>{@code
 * try (BudgetClient budget = BudgetClient.fromSettings(settings)) {   // redis.url, budget.*
 *     for (Row row : rows) {
 *         budget.acquire("alerts", row.chatId(), Duration.ofSeconds(30)); // waits its turn, or throws
 *         provider.send(row);
 *     }
 * }
 * }</pre>
 *
 * <p><b>Keys.</b> The key is the budget's bot id ({@link BudgetKeys#BOT_ID}: the limit key the senders use,
 * e.g. {@code alerts}). With a chat id the request is limited like a sender's message to that chat (global
 * GCRA, chat GCRA, group GCRA for negative ids and {@code @channel}s, penalty gates). Without one only the
 * key's global limit and its bot gate apply: the script needs a chat key, so each key-only request names a
 * fresh chat {@code ~<client>.<n>} whose TAT key expires after one chat interval.
 *
 * <p><b>Same limits.</b> The script takes the limits as arguments, so every caller of one key must use the
 * same {@code budget.*} settings as the senders (the same properties file); otherwise each enforces its own
 * numbers on the shared TATs.
 *
 * <p><b>Outage.</b> Redis sits behind the senders' {@link ResilientBudget}: with
 * {@code budget.redis.outage.mode=local-fallback} this client decides alone at rate /
 * {@code budget.max.replicas} (count it as one replica), with {@code fail-closed} it refuses with
 * {@code UNAVAILABLE} every {@code budget.redis.probe.interval.ms}. With {@code quota.jdbc.url} set, a
 * contractual quota in PostgreSQL is also enforced ({@code QuotaBudget}).
 *
 * <p>Thread-safe; one instance per process is enough (one Redis connection, pipelined). Close it.
 *
 * <p>Why inside module {@code sender} and not a module {@code budget-client}: the script, the key layout
 * and the outage handling live in {@code dev.sluice.sender.budget}; a separate module would have to copy
 * them or depend on {@code sender} anyway. Moving {@code dev.sluice.sender.budget} into a module of its own
 * (so callers do not pull kafka-clients and the Telegram client) is the clean follow-up.
 *
 * <table>
 * <caption>Keys of {@link #fromSettings(Settings)}</caption>
 * <tr><td>{@code redis.url}</td><td>required, e.g. {@code redis://localhost:6379}</td></tr>
 * <tr><td>{@code redis.command.timeout.ms}</td><td>each Redis call, default 250</td></tr>
 * <tr><td>{@code budget.*}, {@code bot.<id>.rate.per.s}</td><td>the limits, as for the senders
 *     ({@link BudgetConfig})</td></tr>
 * <tr><td>{@code budget.client.lane}</td><td>{@code live} (default) or {@code backfill}: backfill only uses
 *     budget above {@code budget.backfill.headroom}, so live senders always go first</td></tr>
 * <tr><td>{@code quota.*}</td><td>optional PostgreSQL quota mode, see {@link QuotaConfig}</td></tr>
 * </table>
 */
public final class BudgetClient implements AutoCloseable {
    /** {@code budget.client.lane}: a key of this client only (the senders take the lane from the topic). */
    public static final ConfigKey<Lane> LANE = ConfigKey.oneOf("budget.client.lane", Lane.class, Lane.LIVE,
            "live (default) or backfill: backfill only uses budget above budget.backfill.headroom, so live senders "
                    + "always go first");
    /** Every key {@link #fromSettings} reads. */
    public static final ConfigKeySet KEYS = RedisConnectionConfig.KEYS.plus(BudgetConfig.KEYS).plus(QuotaConfig.KEYS)
            .plus(ConfigKeySet.of(LANE));
    /** Prefix of the synthetic chat ids of key-only requests; real chat ids never start with it. */
    static final String KEY_ONLY_CHAT_PREFIX = "~";

    private final BudgetPort budget;
    private final Lane lane;
    private final Clock clock;
    private final Sleeper sleeper;
    private final String chatPrefix;
    private final AtomicLong keyOnlySeq = new AtomicLong();
    private final Object schedulerLock = new Object();
    private ScheduledExecutorService scheduler;

    private BudgetClient(BudgetPort budget, Lane lane, Clock clock, Sleeper sleeper) {
        this.budget = Objects.requireNonNull(budget, "budget");
        this.lane = Objects.requireNonNull(lane, "lane");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
        this.chatPrefix = KEY_ONLY_CHAT_PREFIX + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36) + ".";
    }

    /**
     * A client on the Redis of {@code redis.url} with the limits of {@code budget.*} (see the class comment),
     * plus the PostgreSQL quota when {@code quota.jdbc.url} is set.
     *
     * @throws dev.sluice.config.ConfigException naming the key and value of a missing or invalid setting
     */
    public static BudgetClient fromSettings(Settings s) {
        Builder b = builder().redisUrl(RedisConnectionConfig.URL.require(s)).config(BudgetConfig.from(s))
                .commandTimeout(RedisConnectionConfig.COMMAND_TIMEOUT_MS.read(s))
                .lane(LANE.read(s));
        QuotaConfig.fromIfSet(s).ifPresent(b::quota);
        return b.build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * One decision now, for the key alone (its global limit and bot gate). Never waits.
     *
     * @return granted (budget consumed) or refused with {@link Decision#retryIn()}, the wait until it could
     *     pass, and the limit that refused
     * @throws IllegalArgumentException if the key is not a valid budget key ({@link BudgetKeys#BOT_ID})
     */
    public Decision tryAcquire(String key) {
        return budget.tryAcquire(request(key, null));
    }

    /**
     * One decision now for a message to {@code chatId} (limited like a sender's message to that chat).
     * Never waits.
     */
    public Decision tryAcquire(String key, String chatId) {
        return budget.tryAcquire(request(key, Objects.requireNonNull(chatId, "chatId")));
    }

    /**
     * Waits for a grant for the key alone, at most {@code deadline}. See {@link #acquire(String, String, Duration)}.
     */
    public Grant acquire(String key, Duration deadline) throws InterruptedException {
        return acquire(key, null, deadline);
    }

    /**
     * Waits for a grant, at most {@code deadline}: asks, and on a refusal sleeps exactly the wait the budget
     * returned, then asks again (another caller may have taken that slot). A refusal whose wait ends after
     * the deadline ends the call at once, since that wait is the earliest the budget could grant.
     *
     * @param chatId   the chat, or null for the key alone
     * @param deadline the longest this call may wait, &ge; 0 (0 = one attempt)
     * @return the grant (budget consumed)
     * @throws BudgetDeadlineException if no grant is possible within the deadline (nothing consumed)
     * @throws InterruptedException    if interrupted while waiting (nothing consumed)
     */
    public Grant acquire(String key, String chatId, Duration deadline) throws InterruptedException {
        checkDeadline(deadline);
        long start = clock.millis();
        long end = start + deadline.toMillis();
        int attempts = 0;
        while (true) {
            Decision d = budget.tryAcquire(request(key, chatId));
            attempts++;
            long now = clock.millis();
            if (d.granted()) {
                return new Grant(Duration.ofMillis(now - start), attempts);
            }
            if (d.retryIn().toMillis() > end - now) {
                throw new BudgetDeadlineException(key, d, deadline, Duration.ofMillis(now - start), attempts);
            }
            sleeper.sleep(d.retryIn());
        }
    }

    /**
     * {@link #acquire(String, String, Duration)} without blocking the caller: each retry is scheduled at the
     * returned wait on one shared scheduler thread (created on first use).
     *
     * @return completes with the grant, or exceptionally with {@link BudgetDeadlineException} (or the error
     *     of a failed decision)
     */
    public CompletableFuture<Grant> acquireAsync(String key, String chatId, Duration deadline) {
        checkDeadline(deadline);
        request(key, chatId); // validate now, in the caller's thread
        CompletableFuture<Grant> result = new CompletableFuture<>();
        long start = clock.millis();
        scheduler().execute(() -> attemptAsync(result, key, chatId, deadline, start, 1));
        return result;
    }

    private void attemptAsync(CompletableFuture<Grant> result, String key, String chatId, Duration deadline,
                              long start, int attempt) {
        if (result.isDone()) {
            return; // cancelled by the caller
        }
        try {
            Decision d = budget.tryAcquire(request(key, chatId));
            long now = clock.millis();
            if (d.granted()) {
                result.complete(new Grant(Duration.ofMillis(now - start), attempt));
            } else if (d.retryIn().toMillis() > start + deadline.toMillis() - now) {
                result.completeExceptionally(new BudgetDeadlineException(key, d, deadline,
                        Duration.ofMillis(now - start), attempt));
            } else {
                scheduler().schedule(() -> attemptAsync(result, key, chatId, deadline, start, attempt + 1),
                        d.retryIn().toNanos(), TimeUnit.NANOSECONDS);
            }
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
        }
    }

    /**
     * Reports a 429 the provider answered for this key: a shared penalty gate every sender and client of
     * the key waits out, and (scope BOT) a multiplicative cut of the key's rate (AIMD).
     *
     * @param chatId the chat of the refused call; may be null for scope BOT only
     * @throws IllegalArgumentException if a CHAT or GROUP penalty names no chat, or the wait is not positive
     */
    public void penalize(String key, PenaltyScope scope, String chatId, Duration retryAfter) {
        Objects.requireNonNull(scope, "scope");
        if (chatId == null && scope != PenaltyScope.BOT) {
            throw new IllegalArgumentException("chatId: required for a " + scope + " penalty");
        }
        if (retryAfter == null || retryAfter.isNegative() || retryAfter.isZero()) {
            throw new IllegalArgumentException("retryAfter: must be positive, got " + retryAfter);
        }
        BudgetKeys.tag(key);
        budget.penalize(key, scope, chatId != null ? chatId : chatPrefix + "0", retryAfter);
    }

    /** How this client decides right now: SHARED (Redis), FALLBACK_LOCAL or PAUSED (fail-closed). */
    public BudgetState state() {
        return budget.state();
    }

    private BudgetRequest request(String key, String chatId) {
        String chat = chatId != null ? chatId : chatPrefix + keyOnlySeq.incrementAndGet();
        return new BudgetRequest(key, chat, lane);
    }

    private static void checkDeadline(Duration deadline) {
        if (deadline == null || deadline.isNegative()) {
            throw new IllegalArgumentException("deadline: must be >= 0, got " + deadline);
        }
    }

    private ScheduledExecutorService scheduler() {
        synchronized (schedulerLock) {
            if (scheduler == null) {
                ScheduledThreadPoolExecutor s = new ScheduledThreadPoolExecutor(1, r -> {
                    Thread t = new Thread(r, "sluice-budget-client");
                    t.setDaemon(true);
                    return t;
                });
                s.setRemoveOnCancelPolicy(true);
                scheduler = s;
            }
            return scheduler;
        }
    }

    /** Closes the Redis connection (and the quota store); pending {@link #acquireAsync} calls are dropped. */
    @Override
    public void close() {
        synchronized (schedulerLock) {
            if (scheduler != null) {
                scheduler.shutdownNow();
            }
        }
        budget.close();
    }

    /** Builds a client; {@link #redisUrl} (or {@link #budget}) is required. */
    public static final class Builder {
        private String redisUrl;
        private BudgetConfig config = BudgetConfig.of(BudgetLimits.telegramDefaults());
        private Duration commandTimeout = RedisConnectionConfig.COMMAND_TIMEOUT_MS.defaultValue();
        private Lane lane = Lane.LIVE;
        private Clock clock = Clock.systemUTC();
        private Sleeper sleeper = Sleeper.SYSTEM;
        private QuotaConfig quota;
        private BudgetPort budget;

        private Builder() {
        }

        public Builder redisUrl(String url) {
            this.redisUrl = Objects.requireNonNull(url, "redisUrl");
            return this;
        }

        /** Limits, headroom, AIMD and outage mode; must equal the senders' for a shared key. */
        public Builder config(BudgetConfig config) {
            this.config = Objects.requireNonNull(config, "config");
            return this;
        }

        /** The same limits for every key, other settings at their defaults. */
        public Builder limits(BudgetLimits limits) {
            return config(BudgetConfig.of(limits));
        }

        public Builder commandTimeout(Duration timeout) {
            this.commandTimeout = Objects.requireNonNull(timeout, "commandTimeout");
            return this;
        }

        /** {@link Lane#BACKFILL} for bulk jobs: only budget above the live headroom. */
        public Builder lane(Lane lane) {
            this.lane = Objects.requireNonNull(lane, "lane");
            return this;
        }

        /** The clock deadlines are measured with (and the local fallback decides with). */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        public Builder sleeper(Sleeper sleeper) {
            this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
            return this;
        }

        /** Also enforce contractual quotas in PostgreSQL ({@code QuotaBudget}). */
        public Builder quota(QuotaConfig quota) {
            this.quota = Objects.requireNonNull(quota, "quota");
            return this;
        }

        /** Decide with this port instead of Redis (tests, or an embedding that owns its budget). */
        public Builder budget(BudgetPort budget) {
            this.budget = Objects.requireNonNull(budget, "budget");
            return this;
        }

        public BudgetClient build() {
            BudgetStack stack = BudgetStack.of(config).clock(clock).quota(java.util.Optional.ofNullable(quota));
            if (budget != null) {
                stack.pacing(budget);
            } else if (redisUrl != null) {
                stack.redis(redisUrl, commandTimeout);
            } else {
                throw new IllegalStateException("redisUrl: required (or a budget port)");
            }
            return new BudgetClient(stack.build(), lane, clock, sleeper);
        }
    }
}
