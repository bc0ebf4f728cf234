package dev.sluice.sender.budget;

import dev.sluice.config.ConfigException;
import dev.sluice.sender.redis.RedisEndpoint;
import dev.sluice.sender.redis.RedisSession;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.time.Duration;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the senders sharing a Redis decide each bot with the same limits ({@link SharedLimits}). Each sender writes,
 * per bot it serves, its limits into {@code sluice:{<bot>}:limits} (a hash: field = instance id, value = "expiry ms|limits
 * text|nonce", the nonce random per process; one script call per bot and period: write its own field, drop expired
 * fields, return the others), and compares them with every live field of the other senders. A sender that left cleanly
 * removes its fields where they still hold its own nonce ({@link #close}, a compare-and-delete in the bot's slot); a
 * killed one's expire after {@value #LIVE_PERIODS} periods. A disagreement is logged (one line naming the bots, the keys
 * and both values, at most every {@value #WARN_INTERVAL_MIN} min while it lasts) and counted in
 * {@code sluice_budget_limits_disagreeing_bots}; with {@code budget.limits.check=refuse} a sender that disagrees with
 * a live sender at start does not start ({@link #start}). During a rolling change of the limits the senders
 * disagree until the last one restarted: that is true, and what the line and the gauge say.
 *
 * <p>Two live processes with one instance id overwrite one field: a round that finds another live nonce in the field
 * this process wrote the round before logs it (its own line, naming the instance id and the bots, at most every
 * {@value #WARN_INTERVAL_MIN} min), counts those bots in the same gauge and compares with the limits it replaced. The
 * first write of a process is not judged: the nonce it replaces may be a killed predecessor's.
 *
 * <p>Threads: under {@code refuse} the first round runs on the thread calling {@link #start}; the rounds run on this
 * check's own timer thread ({@code sluice-sender-limits-*}); {@link #close} on the closing thread after that timer
 * stopped. The disagreement count is an atomic read by the meter registry.
 */
public final class SharedLimitsCheck implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SharedLimitsCheck.class);
    /** A field lives this many periods after its last write: two missed rounds do not make a sender disappear. */
    static final int LIVE_PERIODS = 3;
    static final int WARN_INTERVAL_MIN = 5;
    /** Time between rounds. */
    public static final Duration PERIOD = Duration.ofSeconds(30);
    /**
     * KEYS[1] the bot's limits hash; ARGV: instance id, limits text, field TTL in ms, this process's nonce. Writes this
     * sender's field ("expiry ms|limits text|nonce"; a sender before nonces wrote "expiry ms|limits text"), drops expired
     * fields. Returns '1' and the limits text this write replaced if its own field held another process's live value
     * (else '0', ''), then the other live fields' pairs (instance id, limits text).
     */
    static final String SCRIPT = """
            if redis.replicate_commands then redis.replicate_commands() end
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local ttl = tonumber(ARGV[3])
            local function parse(v)
              local exp, text, nonce = string.match(v, '^(%d+)|([^|]*)|?([^|]*)$')
              return tonumber(exp), text, nonce
            end
            local out = {'0', ''}
            local prev = redis.call('HGET', KEYS[1], ARGV[1])
            if prev then
              local exp, text, nonce = parse(prev)
              if exp ~= nil and exp >= now and nonce ~= ARGV[4] then
                out[1] = '1'
                out[2] = text
              end
            end
            redis.call('HSET', KEYS[1], ARGV[1], (now + ttl) .. '|' .. ARGV[2] .. '|' .. ARGV[4])
            local all = redis.call('HGETALL', KEYS[1])
            for i = 1, #all, 2 do
              local exp, text = parse(all[i + 1])
              if exp == nil or exp < now then
                redis.call('HDEL', KEYS[1], all[i])
              elseif all[i] ~= ARGV[1] then
                out[#out + 1] = all[i]
                out[#out + 1] = text
              end
            end
            redis.call('PEXPIRE', KEYS[1], ttl)
            return out
            """;
    /** What EVALSHA names ({@link #SCRIPT}'s SHA-1). */
    static final String SCRIPT_SHA = BudgetScript.sha1(SCRIPT);
    /**
     * KEYS[1] the bot's limits hash; ARGV: instance id, this process's nonce. Removes the field only while it holds this
     * process's value (another process under the same instance id may have written it since). Returns 1 if removed.
     */
    static final String REMOVE_SCRIPT = """
            local v = redis.call('HGET', KEYS[1], ARGV[1])
            if v and string.sub(v, -(#ARGV[2] + 1)) == '|' .. ARGV[2] then
              return redis.call('HDEL', KEYS[1], ARGV[1])
            end
            return 0
            """;

    /** What a sender does when another live sender decides a bot with other limits ({@code budget.limits.check}). */
    public enum Policy { WARN, REFUSE, OFF }

    private final RedisEndpoint endpoint;
    /** Owned: shut down after the session closed. One I/O and one computation thread: a few calls per period. */
    private final ClientResources resources = DefaultClientResources.builder().ioThreadPoolSize(1)
            .computationThreadPoolSize(1).build();
    private final String instanceId;
    private final Map<String, SharedLimits> limitsByBot;
    private final Duration period;
    private final Duration timeout;
    /** Unique to this process: tells its field from another process's under the same instance id. Not secret. */
    private final String nonce = newNonce();
    private final AtomicInteger disagreeingBots = new AtomicInteger();
    private final dev.sluice.sender.ThrottledWarning warning;
    private final dev.sluice.sender.ThrottledWarning sharedInstanceIdWarning;
    /**
     * Bots whose field this process wrote in an earlier round: another live value found in its field then was written
     * since by another process. At the first write it may be a killed predecessor's (a restart within the field's life).
     */
    private final Set<String> botsWritten = ConcurrentHashMap.newKeySet();
    private RedisSession<String, String> session; // guarded by this
    private ScheduledExecutorService timer; // guarded by this
    private boolean closed; // guarded by this
    /** False under {@link Policy#OFF}: the rounds still publish this sender's limits (others compare), nothing else. */
    private volatile boolean compare = true;

    /**
     * @param redisUrl any form {@link RedisEndpoint} parses; connected at the first round, again after a failed one
     * @param period   time between rounds; a field lives {@value #LIVE_PERIODS} periods
     * @param timeout  bound on connecting and on each call
     */
    public SharedLimitsCheck(String redisUrl, String instanceId, Map<String, SharedLimits> limitsByBot, Duration period,
                             Duration timeout) {
        this(redisUrl, instanceId, limitsByBot, period, timeout, System::currentTimeMillis);
    }

    /** @param clockMs the time the warnings are spaced by ({@value #WARN_INTERVAL_MIN} min) */
    SharedLimitsCheck(String redisUrl, String instanceId, Map<String, SharedLimits> limitsByBot, Duration period,
                      Duration timeout, LongSupplier clockMs) {
        this.endpoint = RedisEndpoint.parse(redisUrl);
        this.instanceId = instanceId;
        this.limitsByBot = new TreeMap<>(limitsByBot);
        this.period = period;
        this.timeout = timeout;
        long warnIntervalMs = TimeUnit.MINUTES.toMillis(WARN_INTERVAL_MIN);
        this.warning = new dev.sluice.sender.ThrottledWarning(log, warnIntervalMs, clockMs);
        this.sharedInstanceIdWarning = new dev.sluice.sender.ThrottledWarning(log, warnIntervalMs, clockMs);
    }

    /** 64 random bits, in hex. */
    private static String newNonce() {
        byte[] b = new byte[8];
        new SecureRandom().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /** The check of {@code bots} under {@code config}. */
    public static SharedLimitsCheck of(String redisUrl, Duration commandTimeout, String instanceId, BudgetConfig config,
                                       Iterable<String> bots) {
        Map<String, SharedLimits> limits = new LinkedHashMap<>();
        bots.forEach(bot -> limits.put(bot, SharedLimits.of(config, bot)));
        return new SharedLimitsCheck(redisUrl, instanceId, limits, PERIOD, commandTimeout);
    }

    private synchronized RedisSession<String, String> session() {
        if (closed) {
            throw new RedisException("the limits check is closed");
        }
        if (session == null) {
            session = RedisSession.connect(endpoint, StringCodec.UTF8, timeout, resources);
        }
        return session;
    }

    /** {@code sluice:{<bot>}:limits}. */
    static String key(String botId) {
        return BudgetKeys.limits(botId);
    }

    /**
     * Starts the rounds on the check's own daemon thread, every {@link #PERIOD}. Under {@link Policy#REFUSE} the first
     * round runs here, on the calling thread, before the sender consumes (bounded by the timeout; Redis unreachable
     * counts as no disagreement: the outage mode decides then); otherwise it runs at once on the timer thread.
     *
     * @throws ConfigException under {@code refuse}, naming the bots, the keys and both values of a disagreement
     */
    public synchronized void start(Policy policy) {
        if (closed || timer != null) {
            return;
        }
        compare = policy != Policy.OFF;
        long firstMs = 0;
        if (policy == Policy.REFUSE) {
            List<String> problems = round();
            if (!problems.isEmpty()) {
                removeOwnFields(); // refused: not a live sender the others should compare with
                throw new ConfigException(BudgetConfigKeys.LIMITS_CHECK.name(), BudgetConfigKeys.LIMITS_CHECK.name()
                        + "=refuse: " + describe(problems));
            }
            firstMs = period.toMillis();
        }
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sluice-sender-limits-" + instanceId);
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(this::roundQuietly, firstMs, period.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void roundQuietly() {
        try {
            round();
        } catch (RuntimeException e) {
            log.debug("budget limits check failed", e);
        }
    }

    /**
     * The round's answer for {@code bot}: its EVALSHA's reply, or, when the node has no copy of the script (NOSCRIPT: a
     * restart, SCRIPT FLUSH, a failover to a replica that never ran it), one EVAL of the same call, which caches it there.
     * Each waits at most the check's timeout.
     */
    private List<Object> reply(RedisSession<String, String> session, String bot, RedisFuture<List<Object>> call, String ttlMs)
            throws ExecutionException, TimeoutException, InterruptedException {
        try {
            return call.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof io.lettuce.core.RedisNoScriptException)) {
                throw e;
            }
            return session.async().<List<Object>>eval(SCRIPT, ScriptOutputType.MULTI, new String[] {key(bot)}, instanceId,
                    limitsByBot.get(bot).text(), ttlMs, nonce).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /**
     * One round: publishes this sender's limits for every bot, reads the other live senders', updates the gauge and
     * warns on a disagreement, and on another live process writing under this sender's instance id (counted in the
     * gauge too). A bot whose call failed (Redis down, a timeout) keeps its previous count.
     *
     * @return one line per bot that disagrees
     */
    List<String> round() {
        Map<String, RedisFuture<List<Object>>> calls = new LinkedHashMap<>();
        String ttlMs = Long.toString(period.toMillis() * LIVE_PERIODS);
        RedisSession<String, String> session;
        try {
            session = session();
        } catch (RedisException e) {
            log.debug("budget limits check: Redis unreachable ({})", e.toString());
            return List.of();
        }
        // EVALSHA: the script's text (1.6 KB) is sent and hashed by Redis only after a NOSCRIPT (below), not once per bot
        // and round (10,000 bots x 30 senders: 10,000 calls a second)
        limitsByBot.forEach((bot, limits) -> calls.put(bot, session.async().evalsha(SCRIPT_SHA, ScriptOutputType.MULTI,
                new String[] {key(bot)}, instanceId, limits.text(), ttlMs, nonce)));
        List<String> problems = new ArrayList<>();
        Set<String> counted = new TreeSet<>();
        List<String> botsUnderSharedInstanceId = new ArrayList<>();
        int failed = 0;
        for (Map.Entry<String, RedisFuture<List<Object>>> call : calls.entrySet()) {
            String bot = call.getKey();
            List<Object> reply;
            try {
                reply = reply(session, bot, call.getValue(), ttlMs);
            } catch (ExecutionException | TimeoutException | RedisException e) {
                failed++;
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return problems;
            }
            boolean writtenBefore = !botsWritten.add(bot);
            if (!compare) {
                continue;
            }
            SharedLimits mine = limitsByBot.get(bot);
            List<String> diffs = new ArrayList<>();
            if ("1".equals(String.valueOf(reply.get(0))) && writtenBefore) {
                botsUnderSharedInstanceId.add(bot);
                diffs.addAll(mine.differences(SharedLimits.parse(String.valueOf(reply.get(1))),
                        "another process under this sender's instance id " + instanceId));
            }
            for (int i = 2; i + 1 < reply.size(); i += 2) {
                diffs.addAll(mine.differences(SharedLimits.parse(String.valueOf(reply.get(i + 1))),
                        "sender " + reply.get(i)));
            }
            if (!diffs.isEmpty()) {
                problems.add("bot " + bot + ": " + String.join(", ", diffs));
                counted.add(bot);
            }
        }
        counted.addAll(botsUnderSharedInstanceId);
        if (failed == 0 && compare) {
            disagreeingBots.set(counted.size());
        } else {
            log.debug("budget limits check: {} of {} bots not checked this round (Redis)", failed, calls.size());
        }
        if (!problems.isEmpty()) {
            warning.warn(describe(problems));
        }
        if (!botsUnderSharedInstanceId.isEmpty()) {
            sharedInstanceIdWarning.warn("another live sender process publishes budget limits under this sender's "
                    + "instance id " + instanceId + " (bots " + String.join(", ", botsUnderSharedInstanceId) + "): each "
                    + "overwrites the other's field, so the other senders see the limits of only the one that wrote "
                    + "last. Give each sender its own sender.instance.id (docs/operations.md, \"Shared limits\")");
        }
        return problems;
    }

    /** Bots that disagree in the last complete round ({@code sluice_budget_limits_disagreeing_bots}). */
    public int disagreeingBots() {
        return disagreeingBots.get();
    }

    static String describe(List<String> problems) {
        int shown = Math.min(problems.size(), 5);
        return "budget limits differ between senders sharing this Redis, for " + problems.size() + " bot(s): "
                + String.join("; ", problems.subList(0, shown)) + (shown < problems.size() ? "; ..." : "")
                + ". Each budget call carries the limits of the sender that asks, so the bot's shared limit is neither "
                + "configuration and the provider may answer 429: give every sender the same budget.* and bot.<id>.* "
                + "settings (docs/operations.md, \"Shared limits\")";
    }

    /**
     * Stops the rounds and removes this sender's fields where they still hold this process's value (bounded by the
     * command timeout), then disconnects. Once; later calls do nothing.
     */
    @Override
    public void close() {
        ScheduledExecutorService t;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            t = timer;
        }
        if (t != null) {
            t.shutdownNow();
            try {
                t.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        RedisSession<String, String> s;
        synchronized (this) {
            s = session;
        }
        try {
            removeOwnFields(s);
        } finally {
            if (s != null) {
                s.close();
            }
            resources.shutdown(0, timeout.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** Removes this process's fields (where they still hold its nonce), on the caller's thread; failures only logged. */
    private void removeOwnFields() {
        RedisSession<String, String> s;
        synchronized (this) {
            s = session;
        }
        removeOwnFields(s);
    }

    private void removeOwnFields(RedisSession<String, String> s) {
        if (s == null) {
            return;
        }
        try {
            List<RedisFuture<Long>> removals = new ArrayList<>();
            limitsByBot.keySet().forEach(bot -> removals.add(s.async().eval(REMOVE_SCRIPT, ScriptOutputType.INTEGER,
                    new String[] {key(bot)}, instanceId, nonce)));
            for (RedisFuture<Long> r : removals) {
                r.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (ExecutionException | TimeoutException | RedisException e) {
            log.debug("budget limits check: could not remove this sender's fields ({})", e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
