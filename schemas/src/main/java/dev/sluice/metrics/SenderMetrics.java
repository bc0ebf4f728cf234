package dev.sluice.metrics;

import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.NotificationClass;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.EnumMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * The metrics of one sender instance (names in {@link SluiceMetrics}). Create it with the bot ids
 * from the config, {@link #bindTo(MeterRegistry) bind} it once (Resilience4j style), then record
 * events from the sender and hand it the suppliers of its gauges. Every meter exists from the moment
 * of binding (counters at 0), so dashboards and alerts see the series before the first event.
 *
 * <p>Thread-safe: recording methods may be called from any thread. Unknown bot ids are rejected with
 * an {@link IllegalArgumentException} (a bot id is a bounded tag; a token must never become one).
 */
public final class SenderMetrics implements MeterBinder {
    /** The limits a budget decision can refuse by (DESIGN.md, Budget). */
    public static final java.util.List<String> LIMITS = java.util.List.of("global", "chat", "group", "gate", "quota");
    private final Set<String> bots;
    private final Clock clock;
    private final Map<String, MinuteWindow> grantedLastMinute = new ConcurrentHashMap<>();
    private final Map<String, Double> ratePerSecond = new ConcurrentHashMap<>();
    private final Map<String, AtomicReference<LongSupplier>> backlog = new ConcurrentHashMap<>();
    private final Map<String, AtomicReference<java.util.function.BooleanSupplier>> tokenRejected = new ConcurrentHashMap<>();
    private final AtomicReference<IntSupplier> buffered = new AtomicReference<>(() -> 0);
    private final AtomicReference<IntSupplier> maxLaneDepth = new AtomicReference<>(() -> 0);
    private final AtomicReference<IntSupplier> limitsDisagreeing = new AtomicReference<>(() -> 0);
    private final Map<BudgetState, Long> millisInMode = new EnumMap<>(BudgetState.class);
    private BudgetState mode;
    private long modeSinceMillis;

    private volatile MeterRegistry registry;
    private final Map<String, Counter> granted = new ConcurrentHashMap<>();
    private final Map<String, Counter> forfeited = new ConcurrentHashMap<>();
    private final Map<String, Counter> lateAnswers = new ConcurrentHashMap<>();
    private final Map<String, Counter> rateLimited = new ConcurrentHashMap<>();
    private final Map<String, Counter> requests = new ConcurrentHashMap<>();
    private final Map<String, Counter> results = new ConcurrentHashMap<>();
    private final Map<String, Counter> redisErrors = new ConcurrentHashMap<>();
    private final Map<String, Counter> refusals = new ConcurrentHashMap<>();
    private Counter pauses;
    private final Map<NotificationClass, Timer> lag = new EnumMap<>(NotificationClass.class);

    /**
     * @param botIds the configured bot ids (tag values), not tokens
     * @param initialMode the budget mode at start ({@link BudgetState#SHARED} or {@link BudgetState#LOCAL})
     * @param clock wall clock for the 60 s windows and the time in each mode
     */
    public SenderMetrics(Collection<String> botIds, BudgetState initialMode, Clock clock) {
        this.bots = Set.copyOf(new LinkedHashSet<>(botIds));
        this.clock = Objects.requireNonNull(clock, "clock");
        this.mode = Objects.requireNonNull(initialMode, "initialMode");
        this.modeSinceMillis = clock.millis();
        for (BudgetState m : BudgetState.values()) {
            millisInMode.put(m, 0L);
        }
        for (String bot : bots) {
            grantedLastMinute.put(bot, new MinuteWindow(clock));
            backlog.put(bot, new AtomicReference<>(() -> 0L));
            tokenRejected.put(bot, new AtomicReference<>(() -> false));
        }
    }

    /** Creates and binds in one step. */
    public static SenderMetrics bind(MeterRegistry registry, Collection<String> botIds, BudgetState initialMode) {
        SenderMetrics m = new SenderMetrics(botIds, initialMode, Clock.systemUTC());
        m.bindTo(registry);
        return m;
    }

    @Override
    public synchronized void bindTo(MeterRegistry r) {
        if (registry != null) {
            throw new IllegalStateException("SenderMetrics is already bound to a registry");
        }
        for (String bot : bots) {
            granted.put(bot, Counter.builder(SluiceMetrics.BUDGET_GRANTED).tag(SluiceMetrics.TAG_BOT, bot)
                    .description("Budget permits granted (one per send)").register(r));
            forfeited.put(bot, Counter.builder(SluiceMetrics.BUDGET_SLOTS_FORFEITED).tag(SluiceMetrics.TAG_BOT, bot)
                    .description("Reserved slots that passed unused because the send was too late for them").register(r));
            lateAnswers.put(bot, Counter.builder(SluiceMetrics.BUDGET_LATE_ANSWERS).tag(SluiceMetrics.TAG_BOT, bot)
                    .description("Provider answers later after their slot than the arrival guard's slack").register(r));
            Gauge.builder(SluiceMetrics.BUDGET_UTILISATION, this, m -> m.utilisation(bot)).tag(SluiceMetrics.TAG_BOT, bot)
                    .description("Budget granted by this instance in the last 60 s over the bot's global budget for 60 s; sum over replicas")
                    .register(r);
            Gauge.builder(SluiceMetrics.BACKLOG, this, m -> m.backlog(bot)).tag(SluiceMetrics.TAG_BOT, bot)
                    .description("Messages waiting in this instance for the bot").register(r);
            Gauge.builder(SluiceMetrics.BOT_TOKEN_REJECTED, this, m -> m.tokenRejected.get(bot).get().getAsBoolean() ? 1 : 0)
                    .tag(SluiceMetrics.TAG_BOT, bot).description("1 while the provider rejects the bot's token (401, or 404 for "
                            + "a malformed one): its lanes are parked and re-checked every sender.token.recheck.ms").register(r);
            Gauge.builder(SluiceMetrics.DRAIN_RATE, this, m -> m.drainRate(bot)).tag(SluiceMetrics.TAG_BOT, bot)
                    .description("Sends granted per busy second of the last 60 s (seconds with a grant or a backlog)")
                    .register(r);
            Gauge.builder(SluiceMetrics.DRAIN_TIME, this, m -> m.drainTimeSeconds(bot)).tag(SluiceMetrics.TAG_BOT, bot)
                    .baseUnit("seconds").description("Backlog / drain rate: how long the backlog takes to send").register(r);
            for (RateLimitScope s : RateLimitScope.values()) {
                rateLimited.put(key(bot, s), Counter.builder(SluiceMetrics.RATE_LIMITED).tag(SluiceMetrics.TAG_BOT, bot)
                        .tag(SluiceMetrics.TAG_SCOPE, SluiceMetrics.tagValue(s))
                        .description("429 Too Many Requests answers by the limit they are attributed to").register(r));
            }
            for (String limit : LIMITS) {
                refusals.put(key(bot, limit), Counter.builder(SluiceMetrics.BUDGET_REFUSALS).tag(SluiceMetrics.TAG_BOT, bot)
                        .tag(SluiceMetrics.TAG_LIMIT, limit)
                        .description("Budget decisions that refused (the chat is rescheduled at the returned wait)").register(r));
            }
            for (ProviderOutcome o : ProviderOutcome.values()) {
                requests.put(key(bot, o), Counter.builder(SluiceMetrics.PROVIDER_REQUESTS).tag(SluiceMetrics.TAG_BOT, bot)
                        .tag(SluiceMetrics.TAG_OUTCOME, SluiceMetrics.tagValue(o))
                        .description("Provider calls by outcome").register(r));
            }
        }
        for (DeliveryStatus st : DeliveryStatus.values()) {
            for (NotificationClass c : NotificationClass.values()) {
                results.put(key(st, c), Counter.builder(SluiceMetrics.RESULTS).tag(SluiceMetrics.TAG_STATUS, st.name())
                        .tag(SluiceMetrics.TAG_CLASS, c.name()).description("Delivery results written").register(r));
            }
        }
        for (NotificationClass c : NotificationClass.values()) {
            lag.put(c, Timer.builder(SluiceMetrics.DELIVERY_LAG).tag(SluiceMetrics.TAG_CLASS, c.name())
                    .description("Due time to accepted by the provider")
                    .publishPercentiles(0.5, 0.99).publishPercentileHistogram()
                    .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofHours(1))
                    .register(r));
        }
        for (String kind : new String[] {"timeout", "connection", "script", "other"}) {
            redisErrors.put(kind, Counter.builder(SluiceMetrics.REDIS_ERRORS).tag("kind", kind)
                    .description("Redis errors seen by the budget").register(r));
        }
        for (BudgetState m : BudgetState.values()) {
            Gauge.builder(SluiceMetrics.BUDGET_MODE, this, x -> x.currentState() == m ? 1 : 0)
                    .tag(SluiceMetrics.TAG_MODE, SluiceMetrics.tagValue(m))
                    .description("1 for the current budget mode of this instance").register(r);
            FunctionCounter.builder(SluiceMetrics.BUDGET_MODE_TIME, this, x -> x.secondsInMode(m))
                    .tag(SluiceMetrics.TAG_MODE, SluiceMetrics.tagValue(m)).baseUnit("seconds")
                    .description("Time spent in each budget mode").register(r);
        }
        // Faults the sender rides out (issue 15), here so dashboards and alerts see them before the first one; the
        // classes that count them (KafkaResultSink, UnreadableRecords, SenderService) look up these same meters.
        for (String cause : SluiceMetrics.RESULT_WRITE_FAILURE_CAUSES) {
            Counter.builder(SluiceMetrics.RESULTS_WRITE_FAILED).tag("cause", cause)
                    .description("Result writes to delivery.results that failed and are written again (in memory)")
                    .register(r);
        }
        for (String reason : SluiceMetrics.OUTBOX_DEAD_LETTER_REASONS) {
            Counter.builder(SluiceMetrics.OUTBOX_DEAD_LETTERED).tag(SluiceMetrics.TAG_REASON, reason)
                    .description("Outbox records this sender can never read, written to its dead-letter topic")
                    .register(r);
        }
        Counter.builder(SluiceMetrics.OUTBOX_READ_RETRIES)
                .description("Outbox reads that failed for a transient cause (registry) and are read again").register(r);
        for (String bot : bots) {
            Counter.builder(SluiceMetrics.BACKLOG_DEFERRED).tag(SluiceMetrics.TAG_BOT, bot)
                    .description("Outbox records deferred because their bot's backlog was at its bound").register(r);
        }
        pauses = Counter.builder(SluiceMetrics.BACKPRESSURE_PAUSES)
                .description("Times the partitions were paused at the buffer's high-water mark").register(r);
        Gauge.builder(SluiceMetrics.BUFFERED_RECORDS, this, m -> m.buffered.get().getAsInt())
                .description("Records buffered in this instance").register(r);
        Gauge.builder(SluiceMetrics.LANE_DEPTH_MAX, this, m -> m.maxLaneDepth.get().getAsInt())
                .description("Deepest per-chat lane in this instance").register(r);
        Gauge.builder(SluiceMetrics.BUDGET_LIMITS_DISAGREEING_BOTS, this, m -> m.limitsDisagreeing.get().getAsInt())
                .description("Bots another live sender sharing this Redis decides with other budget limits")
                .register(r);
        registry = r;
    }

    // ---- events ----

    /** One terminal result written to delivery.results. */
    public void result(DeliveryStatus status, NotificationClass notificationClass) {
        bound();
        results.get(key(status, notificationClass)).increment();
    }

    /** The budget granted {@code permits} sends for {@code bot} (before the provider call). */
    public void budgetGranted(String bot, int permits) {
        bound();
        if (permits < 0) {
            throw new IllegalArgumentException("permits must be >= 0, was " + permits);
        }
        counter(granted, bot, bot).increment(permits);
        grantedLastMinute.get(bot).add(permits);
    }

    /** A reserved slot of {@code bot} passed unused: the send was later than budget.reservation.late.max.ms. */
    public void slotForfeited(String bot) {
        bound();
        counter(forfeited, bot, bot).increment();
    }

    /** A call of {@code bot} was answered later after its slot than the arrival guard's slack, and reported. */
    public void lateAnswer(String bot) {
        bound();
        counter(lateAnswers, bot, bot).increment();
    }

    /** The bot's configured global budget (budget.global.rate.per.s): the denominator of utilisation. */
    public void budgetRate(String bot, double permitsPerSecond) {
        checkBot(bot);
        if (!(permitsPerSecond > 0)) {
            throw new IllegalArgumentException("budget rate for bot " + bot + " must be > 0, was " + permitsPerSecond);
        }
        ratePerSecond.put(bot, permitsPerSecond);
    }

    /** The budget refused a send for {@code bot}; {@code limit} is one of {@link #LIMITS}. */
    public void budgetRefused(String bot, String limit) {
        bound();
        Counter c = refusals.get(key(bot, limit));
        if (c == null) {
            checkBot(bot);
            throw new IllegalArgumentException("limit must be one of " + LIMITS + ", was '" + limit + "'");
        }
        c.increment();
    }

    /** The consumer paused its partitions at the high-water mark. */
    public void backpressurePaused() {
        bound();
        pauses.increment();
    }

    /** One provider answer; a 429 also needs {@link #rateLimited}. */
    public void providerResponse(String bot, ProviderOutcome outcome) {
        bound();
        counter(requests, key(bot, outcome), bot).increment();
    }

    /** A 429 from the provider, attributed to a scope. */
    public void rateLimited(String bot, RateLimitScope scope) {
        bound();
        counter(rateLimited, key(bot, scope), bot).increment();
    }

    /** Due-to-sent lag of one delivered message (negative durations count as zero). */
    public void lag(NotificationClass notificationClass, Duration dueToSent) {
        bound();
        lag.get(notificationClass).record(dueToSent.isNegative() ? Duration.ZERO : dueToSent);
    }

    /** A Redis error; {@code kind} is one of timeout, connection, script, other (anything else counts as other). */
    public void redisError(String kind) {
        bound();
        Counter c = redisErrors.get(kind);
        (c != null ? c : redisErrors.get("other")).increment();
    }

    /** The instance switched budget mode (e.g. the Redis circuit breaker opened). */
    public synchronized void budgetState(BudgetState newMode) {
        Objects.requireNonNull(newMode, "newMode");
        long now = clock.millis();
        millisInMode.merge(mode, now - modeSinceMillis, Long::sum);
        mode = newMode;
        modeSinceMillis = now;
    }

    // ---- gauge sources ----

    /** Records buffered in this instance (all lanes). */
    public void bufferedRecords(IntSupplier supplier) {
        buffered.set(Objects.requireNonNull(supplier));
    }

    /** Bots this sender serves that another live sender decides with other budget limits ({@code budget.limits.check}). */
    public void limitsDisagreeingBots(IntSupplier supplier) {
        limitsDisagreeing.set(Objects.requireNonNull(supplier));
    }

    /** The deepest per-chat lane in this instance. */
    public void maxLaneDepth(IntSupplier supplier) {
        maxLaneDepth.set(Objects.requireNonNull(supplier));
    }

    /** Messages waiting in this instance for {@code bot}. */
    public void backlog(String bot, LongSupplier supplier) {
        checkBot(bot);
        backlog.get(bot).set(Objects.requireNonNull(supplier));
    }

    /** Whether the provider rejects {@code bot}'s token right now (gauge {@code sluice_bot_token_rejected}). */
    public void tokenRejected(String bot, java.util.function.BooleanSupplier supplier) {
        checkBot(bot);
        tokenRejected.get(bot).set(Objects.requireNonNull(supplier));
    }

    // ---- readings (also used by readiness checks and tests) ----

    public synchronized BudgetState currentState() {
        return mode;
    }

    synchronized double secondsInMode(BudgetState m) {
        long ms = millisInMode.get(m) + (m == mode ? clock.millis() - modeSinceMillis : 0);
        return ms / 1000.0;
    }

    /** Granted in the last 60 s / (rate × 60); NaN until {@link #budgetRate} is known. */
    public double utilisation(String bot) {
        checkBot(bot);
        Double rate = ratePerSecond.get(bot);
        return rate == null ? Double.NaN : grantedLastMinute.get(bot).sum() / (rate * MinuteWindow.SECONDS);
    }

    /**
     * The bot had a backlog waiting over [fromMillis, toMillis] (the sender's status reports say so): those seconds
     * count as draining time in {@link #drainRate}, granted or not, so a stuck backlog's rate falls.
     */
    public void markBusy(String bot, long fromMillis, long toMillis) {
        checkBot(bot);
        grantedLastMinute.get(bot).markBusy(fromMillis, toMillis);
    }

    /** Sends granted per busy second of the last minute (seconds with a grant or marked by {@link #markBusy}). */
    public double drainRate(String bot) {
        checkBot(bot);
        return grantedLastMinute.get(bot).perSecond();
    }

    double backlog(String bot) {
        return backlog.get(bot).get().getAsLong();
    }

    /** Backlog / drain rate in seconds: 0 without backlog, +Inf when a backlog is not draining. */
    public double drainTimeSeconds(String bot) {
        double b = backlog(bot);
        if (b <= 0) {
            return 0;
        }
        double rate = drainRate(bot);
        return rate > 0 ? b / rate : Double.POSITIVE_INFINITY;
    }

    private void bound() {
        if (registry == null) {
            throw new IllegalStateException("SenderMetrics.bindTo(registry) must be called before recording");
        }
    }

    private void checkBot(String bot) {
        if (!bots.contains(bot)) {
            throw new IllegalArgumentException("unknown bot id '" + dev.sluice.config.TokenRedaction.redact(bot) + "' (configured: " + bots + ")");
        }
    }

    private Counter counter(Map<String, Counter> counters, String key, String bot) {
        checkBot(bot);
        return counters.get(key);
    }

    private static String key(Object a, Object b) {
        return a + "\u0000" + b;
    }
}
