package dev.sluice.sender.budget;

import dev.sluice.metrics.BudgetState;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
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
 * The circuit opens after {@code budget.circuit.minimum.calls} failed calls in a row; while open, nothing
 * is sent to Redis. After the probe interval the next request is a half-open probe: on success the shared
 * state ({@link BudgetState#SHARED}) resumes by itself; on failure the circuit opens again. A request that
 * meets a failing Redis is decided by the outage mode at once, so callers never see
 * {@link BudgetUnavailableException}. Penalties are always recorded locally too, so the fallback honours
 * them; those recorded while Redis is down are written to Redis when shared mode resumes (with what is left
 * of their retry_after), so the other replicas learn them.
 *
 * <p><b>Resuming</b>: before the first shared decision after an outage, every bot this instance decided or
 * penalized during the outage starts drained in Redis ({@link BudgetPort#startDrained}): a Redis that came
 * back empty does not hand out a fresh burst per bot on top of what the fallback budgets just sent.
 *
 * <p>The Redis client is created lazily (a sender starts even when Redis is down) and kept through timeouts and lost
 * connections (Lettuce reconnects it). Thread-safe: the client is guarded by this, the state by {@code nanosInState}.
 */
public final class ResilientBudget implements BudgetPort {
    private static final Logger log = LoggerFactory.getLogger(ResilientBudget.class);

    private final Supplier<BudgetPort> sharedFactory;
    private final BudgetConfig config;
    private final BudgetListener listener;
    private final CircuitBreaker breaker;
    private final LocalGcraBudget fallback;
    private final BudgetState outageState;
    private final Map<BudgetState, Long> nanosInState = new EnumMap<>(BudgetState.class);
    private final java.util.Optional<String> sentMarksUrl;
    /** Guarded by this: handed to every Redis budget this one connects ({@link #foldMarkWrites}). */
    private MarkWrites markWrites;
    private final Clock clock;
    private final java.util.concurrent.atomic.LongAdder sharedCalls = new java.util.concurrent.atomic.LongAdder();
    /** Bots decided or penalized while Redis could not decide: drained in Redis when shared mode resumes. */
    private final java.util.Set<String> touchedInOutage = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Penalties recorded while Redis was down, replayed when shared mode resumes. */
    private final java.util.Queue<Penalty> unshared = new java.util.concurrent.ConcurrentLinkedQueue<>();
    /** Written under this (connect, close); volatile so {@link #routineHorizonShort} reads it without the monitor. */
    private volatile BudgetPort shared;
    /** Guarded by this: Redis budget clients built so far (the factory's calls, failed ones included). */
    private int clientsBuilt;
    private BudgetState state = BudgetState.SHARED;
    private long stateSinceNanos = System.nanoTime();
    private volatile boolean closed;

    /**
     * Connects to Redis (lazily; Redis may be down now) and decides there, with the outage mode of
     * {@code config} while it cannot.
     *
     * @param commandTimeout bound on each Redis command; keep it short (e.g. 250 ms)
     * @param clock          time of the local fallback only (the shared decision uses Redis server time)
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

    private record Penalty(String botId, PenaltyScope scope, String chatId, long untilMs) {
    }

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
        this.clock = clock;
        this.sharedFactory = Objects.requireNonNull(sharedFactory, "sharedFactory");
        this.config = Objects.requireNonNull(config, "config");
        this.listener = Objects.requireNonNull(listener, "listener");
        this.fallback = new LocalGcraBudget(config.fallbackShare(), Objects.requireNonNull(clock, "clock"), BudgetState.FALLBACK_LOCAL);
        this.outageState = config.outageMode() == BudgetConfig.OutageMode.FAIL_CLOSED
                ? BudgetState.PAUSED : BudgetState.FALLBACK_LOCAL;
        int calls = config.circuitMinimumCalls();
        this.breaker = CircuitBreaker.of("sluice-budget-redis", CircuitBreakerConfig.custom()
                .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .slidingWindowSize(calls)
                .minimumNumberOfCalls(calls)
                .failureRateThreshold(100)
                .waitDurationInOpenState(config.probeInterval())
                .permittedNumberOfCallsInHalfOpenState(1)
                .automaticTransitionFromOpenToHalfOpenEnabled(false)
                .recordExceptions(BudgetUnavailableException.class)
                .build());
        breaker.getEventPublisher().onStateTransition(e -> CircuitLog.transition(log, e.getStateTransition()));
        for (BudgetState s : BudgetState.values()) {
            nanosInState.put(s, 0L);
        }
        listener.stateChanged(state);
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
        if (breaker.tryAcquirePermission()) {
            List<Decision> decided = callShared(s -> s.tryAcquireAll(botId, requests));
            if (decided != null) {
                enter(BudgetState.SHARED);
                return decided;
            }
        }
        enter(outageState);
        touchedInOutage.add(botId);
        if (outageState == BudgetState.PAUSED) {
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
        fallback.penalize(botId, scope, chatId, retryAfter);
        boolean shared = breaker.tryAcquirePermission() && callShared(s -> {
            s.penalize(botId, scope, chatId, retryAfter);
            return Boolean.TRUE;
        }) != null;
        if (!shared) {
            keepUnshared(botId, scope, chatId, retryAfter);
        }
    }

    /**
     * Forwarded to Redis while shared; grants of the local fallback carry no number, and a report lost to an
     * outage only weakens the guard for one window.
     */
    @Override
    public void reportLateAnswer(String botId, long grantSeq) {
        if (state() == BudgetState.SHARED && breaker.tryAcquirePermission()) {
            callShared(s -> {
                s.reportLateAnswer(botId, grantSeq);
                return Boolean.TRUE;
            });
        }
    }

    /**
     * One call of the shared budget, the breaker's permission already taken: replays what an outage left first,
     * then records the outcome on the breaker. Returns the call's value, or null when Redis failed (recorded: the
     * outage mode decides). Other errors go to the caller.
     */
    private <T> T callShared(Function<BudgetPort, T> call) {
        long start = System.nanoTime();
        BudgetPort s = null;
        try {
            s = shared();
            resumeIfNeeded(s);
            sharedCalls.increment();
            T value = call.apply(s);
            breaker.onSuccess(System.nanoTime() - start, TimeUnit.NANOSECONDS);
            return value;
        } catch (BudgetUnavailableException e) {
            failed(start, e);
        } catch (IllegalStateException | RejectedExecutionException e) {
            if (closed) {
                breaker.releasePermission();
                throw e;
            }
            failed(start, closedUnderUs(e));
            dropShared(s); // that client cannot run commands any more: a fresh one on the next probe
        } catch (RuntimeException e) {
            breaker.releasePermission();
            throw e;
        }
        return null;
    }

    private void keepUnshared(String botId, PenaltyScope scope, String chatId, Duration retryAfter) {
        touchedInOutage.add(botId);
        unshared.add(new Penalty(botId, scope, chatId, clock.millis() + retryAfter.toMillis()));
    }

    /**
     * The first shared call after an outage: drain the bots of the outage in Redis and replay the penalties
     * recorded meanwhile (what is left of them). Throws like any shared call; then it is tried again on the
     * next probe.
     */
    private void resumeIfNeeded(BudgetPort s) {
        if (state() == BudgetState.SHARED && unshared.isEmpty()) {
            return;
        }
        for (String bot : List.copyOf(touchedInOutage)) {
            sharedCalls.increment();
            s.startDrained(bot);
            touchedInOutage.remove(bot);
        }
        Penalty p;
        while ((p = unshared.peek()) != null) {
            long left = p.untilMs() - clock.millis();
            if (left > 0) {
                sharedCalls.increment();
                s.penalize(p.botId(), p.scope(), p.chatId(), Duration.ofMillis(left));
            }
            unshared.poll();
        }
    }

    /**
     * Drains the bot in Redis now while shared; during an outage (or when this call meets one) it is drained when
     * shared mode resumes, as every bot decided during the outage is.
     */
    @Override
    public void startDrained(String botId) {
        boolean drained = state() == BudgetState.SHARED && breaker.tryAcquirePermission() && callShared(s -> {
            s.startDrained(botId);
            return Boolean.TRUE;
        }) != null;
        if (!drained) {
            touchedInOutage.add(botId);
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

    /**
     * A call that failed in Redis (timeout, lost connection, script error): recorded on the breaker; the client is kept,
     * as Lettuce reconnects a broken connection by itself (backing off to at most 1 s) and rejects commands meanwhile.
     * Issue 19: dropping it on a connection error closed it under the other threads' calls, whose "Connection closed"
     * dropped the next client too (9 clients for 3 broken connections in {@code ResilientBudgetTimeoutIT}).
     */
    private void failed(long startNanos, BudgetUnavailableException e) {
        breaker.onError(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS, e);
        listener.redisError(e.kind());
        log.debug("budget decision without Redis: {}", e.getMessage());
    }

    private synchronized BudgetPort shared() {
        if (closed) {
            throw new IllegalStateException("budget is closed");
        }
        if (shared == null) {
            if (clientsBuilt++ > 0) {
                log.warn("budget: building Redis client #{} (the last one could not connect or was closed)", clientsBuilt);
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

    private void enter(BudgetState next) {
        synchronized (nanosInState) {
            if (state == next) {
                return;
            }
            long now = System.nanoTime();
            nanosInState.merge(state, now - stateSinceNanos, Long::sum);
            log.warn("budget state {} -> {}", state, next);
            state = next;
            stateSinceNanos = now;
        }
        listener.stateChanged(next);
    }

    @Override
    public BudgetState state() {
        synchronized (nanosInState) {
            return state;
        }
    }

    /** Time spent in each state so far, including the current one. */
    public Map<BudgetState, Duration> timeInState() {
        synchronized (nanosInState) {
            Map<BudgetState, Duration> out = new EnumMap<>(BudgetState.class);
            long now = System.nanoTime();
            nanosInState.forEach((s, n) -> out.put(s, Duration.ofNanos(n + (s == state ? now - stateSinceNanos : 0))));
            return out;
        }
    }

    /** The circuit breaker's state (CLOSED, OPEN, HALF_OPEN), for health checks and tests. */
    public CircuitBreaker.State circuitState() {
        return breaker.getState();
    }

    @Override
    public synchronized void close() {
        closed = true;
        dropShared();
        fallback.close();
    }
}
