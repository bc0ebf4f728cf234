package dev.sluice.sender.budget;

import dev.sluice.metrics.BudgetState;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shared Redis budget behind a Resilience4j circuit breaker, with the configured outage mode
 * ({@code budget.redis.outage.mode}, DESIGN.md: "never silently above the limit"):
 * <ul>
 *   <li>{@code local-fallback}: while Redis cannot decide, this instance decides alone with a
 *       {@link LocalGcraBudget} at the bot's global rate / {@code budget.max.replicas} and the per-chat and
 *       per-group limits of the chats it owns (state {@link BudgetState#FALLBACK_LOCAL});</li>
 *   <li>{@code fail-closed}: every request is refused with {@link Limit#UNAVAILABLE} and a wait of
 *       {@code budget.redis.probe.interval.ms}; nothing is sent, messages wait in Kafka
 *       ({@link BudgetState#PAUSED}).</li>
 * </ul>
 * The outage and resume state machine is {@link RedisOutage}'s: the circuit breaker that says when Redis may be
 * called, the budget state, and what an outage leaves for Redis when shared mode resumes (the drained start of the
 * outage's bots, the penalties Redis did not get). A request that meets a failing Redis is decided by the outage mode
 * at once, so callers never see {@link BudgetUnavailableException}. Penalties are always recorded locally too, so the
 * fallback honours them.
 *
 * <p><b>What it forwards</b>, each {@link BudgetPort} method stating its own capability: decisions to the Redis budget
 * while the breaker lets a call through, else to the outage mode (the fallback, or a refusal); penalties to the
 * fallback always and to Redis (or kept for the resume); the late-answer report and the drained start to Redis while
 * shared (a drained start missed is made on resume, a report missed is dropped); the sent-mark writes to every Redis
 * client it builds; the routine-horizon answer to the Redis client while one is connected; the idle probe to the Redis client while
 * Redis cannot decide ({@link #probe}); {@link #close()} to the Redis client and the fallback. Its own: {@link #reserves()} (true), {@link #sentMarksRedisUrl()},
 * {@link #redisRoundTrips()} (its calls to the Redis budget) and {@link #state()}.
 *
 * <p>The Redis client is created lazily (a sender starts even when Redis is down) and kept through timeouts and lost
 * connections (Lettuce reconnects it). Thread-safe: the client is guarded by this, the state by {@link RedisOutage}.
 */
public final class ResilientBudget implements BudgetPort {
    private static final Logger log = LoggerFactory.getLogger(ResilientBudget.class);

    private final Supplier<BudgetPort> sharedFactory;
    private final BudgetConfig config;
    private final LocalGcraBudget fallback;
    private final RedisOutage outage;
    private final java.util.Optional<String> sentMarksUrl;
    /** Guarded by this: handed to every Redis budget this one connects ({@link #foldMarkWrites}). */
    private MarkWrites markWrites;
    private final java.util.concurrent.atomic.LongAdder sharedCalls = new java.util.concurrent.atomic.LongAdder();
    /** Written under this (connect, close); volatile so {@link #routineHorizonShort} reads it without the monitor. */
    private volatile BudgetPort shared;
    /** Guarded by this: Redis budget clients built so far (the factory's calls, failed ones included). */
    private int clientsBuilt;
    /**
     * A rebuild is logged at WARN at most once a minute, with how many went to DEBUG since: through an outage the probe
     * rebuilds a client that could not connect once a probe interval (by default every second).
     */
    static final long REBUILD_WARN_INTERVAL_MS = 60_000;
    private final dev.sluice.sender.ThrottledWarning rebuildWarning;
    private volatile boolean closed;
    /** The last {@link LocalGcraBudget#sharedSentUntil} told to the fallback (a racing second telling is harmless). */
    private volatile long sharedSentUntilTold = Long.MIN_VALUE;

    /**
     * Connects to Redis (lazily; Redis may be down now) and decides there, with the outage mode of
     * {@code config} while it cannot.
     *
     * @param commandTimeout bound on each Redis command; keep it short (e.g. 250 ms)
     * @param clock          time of the local fallback and of the penalties kept during an outage (the shared decision
     *                       uses Redis server time)
     */
    public static ResilientBudget connect(String redisUrl, BudgetConfig config, Duration commandTimeout,
                                          BudgetListener listener, Clock clock) {
        return connect(redisUrl, config, commandTimeout, listener, clock, null);
    }

    /**
     * As {@link #connect(String, BudgetConfig, Duration, BudgetListener, Clock)}, with Lettuce's command latencies
     * recorded in {@code registry} (tag {@code client=budget}); null: not recorded.
     */
    public static ResilientBudget connect(String redisUrl, BudgetConfig config, Duration commandTimeout,
                                          BudgetListener listener, Clock clock,
                                          io.micrometer.core.instrument.MeterRegistry registry) {
        Objects.requireNonNull(redisUrl, "redisUrl");
        return new ResilientBudget(() -> new RedisGcraBudget(redisUrl, config, commandTimeout, registry), config,
                listener, clock, java.util.Optional.of(redisUrl));
    }

    /** The outage mode's decision needs no drained start (fail-closed sends nothing). */
    private static final Runnable NO_DRAIN = () -> { };

    /**
     * @param sharedFactory makes the shared budget; may throw {@link BudgetUnavailableException}; called again
     *                      on a probe after it failed or after a connection error
     */
    public ResilientBudget(Supplier<BudgetPort> sharedFactory, BudgetConfig config, BudgetListener listener, Clock clock) {
        this(sharedFactory, config, listener, clock, java.util.Optional.empty());
    }

    private ResilientBudget(Supplier<BudgetPort> sharedFactory, BudgetConfig config, BudgetListener listener, Clock clock,
                            java.util.Optional<String> sentMarksUrl) {
        this.sentMarksUrl = sentMarksUrl;
        this.sharedFactory = Objects.requireNonNull(sharedFactory, "sharedFactory");
        this.config = Objects.requireNonNull(config, "config");
        Objects.requireNonNull(listener, "listener");
        Objects.requireNonNull(clock, "clock");
        this.rebuildWarning = new dev.sluice.sender.ThrottledWarning(log, REBUILD_WARN_INTERVAL_MS, clock::millis);
        this.fallback = new LocalGcraBudget(config.fallbackShare(), clock, BudgetState.FALLBACK_LOCAL);
        this.outage = new RedisOutage(config, listener, clock);
    }

    @Override
    public Decision tryAcquire(BudgetRequest request) {
        return tryAcquireAll(request.botId(), List.of(request)).get(0);
    }

    @Override
    public List<Decision> tryAcquireAll(String botId, List<BudgetRequest> requests) {
        if (requests.isEmpty()) {
            return List.of();
        }
        if (outage.permitsCall()) {
            List<Decision> decided = callShared(s -> s.tryAcquireAll(botId, requests));
            if (decided != null) {
                outage.decidedShared();
                return decided;
            }
        }
        // the provider still counts the shared grants of the last second: the fallback starts the bot drained
        outage.decidedInOutage(botId, outage.outageState() == BudgetState.FALLBACK_LOCAL
                ? () -> fallback.startDrained(botId) : NO_DRAIN);
        if (outage.outageState() == BudgetState.FALLBACK_LOCAL) {
            // and a group's shared grants of the last minute: its first fallback grant waits one group interval after
            // the last instant a shared grant could go out (the outage's start + the reservation horizon)
            long until = outage.outageStartMs() + config.reservationMax().toMillis();
            if (until != sharedSentUntilTold) { // once per outage, not a monitor per fallback decision
                fallback.sharedSentUntil(until);
                sharedSentUntilTold = until;
            }
        }
        if (outage.outageState() == BudgetState.PAUSED) {
            long waitMs = Math.max(1, config.probeInterval().toMillis());
            List<Decision> out = new ArrayList<>(requests.size());
            for (BudgetRequest r : requests) {
                if (!r.botId().equals(botId)) {
                    throw new IllegalArgumentException("request for bot " + r.botId() + " in a batch of bot " + botId);
                }
                out.add(Decision.refused(waitMs, Limit.UNAVAILABLE));
            }
            return out;
        }
        return fallback.tryAcquireAll(botId, requests);
    }

    @Override
    public void penalize(String botId, PenaltyScope scope, String chatId, Duration retryAfter) {
        fallback.penalize(botId, scope, chatId, retryAfter, outage.state() == BudgetState.FALLBACK_LOCAL);
        boolean shared = outage.permitsCall() && callShared(s -> {
            s.penalize(botId, scope, chatId, retryAfter);
            return Boolean.TRUE;
        }) != null;
        if (!shared) {
            outage.keepUnshared(botId, scope, chatId, retryAfter);
        }
    }

    /**
     * Forwarded to Redis while shared; grants of the local fallback carry no number, and a report lost to an
     * outage only weakens the guard for one window.
     */
    @Override
    public void reportLateAnswer(String botId, long grantSeq) {
        if (state() == BudgetState.SHARED && outage.permitsCall()) {
            callShared(s -> {
                s.reportLateAnswer(botId, grantSeq);
                return Boolean.TRUE;
            });
        }
    }

    /**
     * While Redis cannot decide: one call to it (a PING of every primary, {@link RedisGcraBudget#probe}) when the breaker
     * lets one through (its probe interval elapsed, or fewer failures than open it). On success what the outage left is
     * replayed first (the drained starts, the penalties: {@link RedisOutage#resumeIfNeeded}, as before a first shared
     * decision) and the state is {@link BudgetState#SHARED} again, so an idle sender says so. Nothing while shared: the
     * decisions are the probe then. Never throws a Redis failure (recorded on the breaker like a decision's).
     */
    @Override
    public void probe() {
        if (closed || state() == BudgetState.SHARED || !outage.permitsCall()) {
            return;
        }
        if (callShared(s -> {
            s.probe();
            return Boolean.TRUE;
        }) != null) {
            outage.decidedShared();
        }
    }

    /**
     * One call of the shared budget, the breaker's permission already taken: replays what an outage left first
     * ({@link RedisOutage#resumeIfNeeded}), then records the outcome on the breaker. Returns the call's value, or null
     * when Redis failed (recorded: the outage mode decides). Other errors go to the caller.
     *
     * <p>A call that failed in Redis (timeout, lost connection, script error) keeps the client, as Lettuce reconnects
     * a broken connection by itself (backing off to at most 1 s) and rejects commands meanwhile. Issue 19: dropping
     * it on a connection error closed it under the other threads' calls, whose "Connection closed" dropped the next
     * client too (9 clients for 3 broken connections in {@code ResilientBudgetTimeoutIT}).
     */
    private <T> T callShared(Function<BudgetPort, T> call) {
        long start = System.nanoTime();
        BudgetPort s = null;
        try {
            s = shared();
            outage.resumeIfNeeded(s, sharedCalls);
            sharedCalls.increment();
            T value = call.apply(s);
            outage.succeeded(start);
            return value;
        } catch (BudgetUnavailableException e) {
            outage.failed(start, e);
        } catch (IllegalStateException | RejectedExecutionException e) {
            if (closed) {
                outage.released();
                throw e;
            }
            outage.failed(start, closedUnderUs(e));
            dropShared(s); // that client cannot run commands any more: a fresh one on the next probe
        } catch (RuntimeException e) {
            outage.released();
            throw e;
        }
        return null;
    }

    /**
     * Drains the bot in Redis now while shared; during an outage (or when this call meets one) it is drained when
     * shared mode resumes, as every bot decided during the outage is.
     */
    @Override
    public void startDrained(String botId) {
        boolean drained = state() == BudgetState.SHARED && outage.permitsCall() && callShared(s -> {
            s.startDrained(botId);
            return Boolean.TRUE;
        }) != null;
        if (!drained) {
            outage.drainOnResume(botId);
        }
    }

    /** Redis reserves; the local fallback refuses such requests as usual (its grants are for now only). */
    @Override
    public boolean reserves() {
        return true;
    }

    /** The Redis of {@link #connect}; empty when built from a factory (whose marks it cannot know). */
    @Override
    public java.util.Optional<String> sentMarksRedisUrl() {
        return sentMarksUrl;
    }

    /**
     * Pending sent-mark writes ride on the calls of the Redis budget, this one and every one reconnected later; while
     * the fallback decides, they wait for the flush of the sent marks (which fails too while Redis is down).
     */
    @Override
    public synchronized boolean foldMarkWrites(MarkWrites writes) {
        this.markWrites = writes;
        if (shared != null) {
            shared.foldMarkWrites(writes);
        }
        return true;
    }

    /** The Redis budget's last word while one is connected; true without one (the fallback reserves nothing). */
    @Override
    public boolean routineHorizonShort(String botId) {
        BudgetPort s = shared; // once: close() may clear it meanwhile
        return s == null || s.routineHorizonShort(botId);
    }

    /** Calls made to the shared budget (each one Redis round trip), failed ones included. */
    @Override
    public long redisRoundTrips() {
        return sharedCalls.sum();
    }

    /**
     * When one thread's connection error drops the Redis client, threads still inside a call of that client
     * get Netty's {@code IllegalStateException("cannot be started once stopped")} or a rejected task, not a
     * Redis error. It is the same outage: the outage mode decides, the caller never sees it.
     */
    private static BudgetUnavailableException closedUnderUs(RuntimeException e) {
        return new BudgetUnavailableException("Redis client closed during the call (connection lost)",
                new io.lettuce.core.RedisConnectionException("client closed after a connection error", e));
    }

    private synchronized BudgetPort shared() {
        if (closed) {
            throw new IllegalStateException("budget is closed");
        }
        if (shared == null) {
            if (clientsBuilt++ > 0) {
                rebuildWarning.warn("budget: building Redis client #" + clientsBuilt
                        + " (the last one could not connect or was closed)");
            }
            shared = sharedFactory.get();
            if (markWrites != null) {
                shared.foldMarkWrites(markWrites);
            }
        }
        return shared;
    }

    /** Drops {@code failed} if it is still the client in use (never a newer one another thread built meanwhile). */
    private synchronized void dropShared(BudgetPort failed) {
        if (failed != null && shared == failed) {
            dropShared();
        }
    }

    private synchronized void dropShared() {
        BudgetPort s = shared;
        shared = null;
        if (s != null) {
            try {
                s.close();
            } catch (RuntimeException ex) {
                log.debug("closing the failed Redis budget client: {}", ex.toString());
            }
        }
    }

    /** {@link BudgetState#SHARED}, or the outage mode's state while Redis cannot decide ({@link RedisOutage}). */
    @Override
    public BudgetState state() {
        return outage.state();
    }

    /** Time spent in each state so far, including the current one. */
    public Map<BudgetState, Duration> timeInState() {
        return outage.timeInState();
    }

    /** The circuit breaker's state (CLOSED, OPEN, HALF_OPEN), for health checks and tests. */
    public CircuitBreaker.State circuitState() {
        return outage.circuitState();
    }

    @Override
    public synchronized void close() {
        closed = true;
        dropShared();
        fallback.close();
    }
}
