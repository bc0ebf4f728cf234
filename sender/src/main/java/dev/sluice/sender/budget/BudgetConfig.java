package dev.sluice.sender.budget;

import static dev.sluice.sender.budget.BudgetConfigKeys.AIMD_DECREASE;
import static dev.sluice.sender.budget.BudgetConfigKeys.AIMD_FLOOR;
import static dev.sluice.sender.budget.BudgetConfigKeys.AIMD_INCREASE;
import static dev.sluice.sender.budget.BudgetConfigKeys.ARRIVAL_GUARD_LIMIT;
import static dev.sluice.sender.budget.BudgetConfigKeys.BACKFILL_HEADROOM;
import static dev.sluice.sender.budget.BudgetConfigKeys.BOT_RATE_SUFFIX;
import static dev.sluice.sender.budget.BudgetConfigKeys.CIRCUIT_MINIMUM_CALLS;
import static dev.sluice.sender.budget.BudgetConfigKeys.GLOBAL_ARRIVAL_MARGIN_MS;
import static dev.sluice.sender.budget.BudgetConfigKeys.GROUP_ARRIVAL_MARGIN_MS;
import static dev.sluice.sender.budget.BudgetConfigKeys.MAX_REPLICAS;
import static dev.sluice.sender.budget.BudgetConfigKeys.OUTAGE_MODE;
import static dev.sluice.sender.budget.BudgetConfigKeys.PAID_RATE;
import static dev.sluice.sender.budget.BudgetConfigKeys.PROBE_INTERVAL_MS;
import static dev.sluice.sender.budget.BudgetConfigKeys.RESERVATION_LATE_MAX_MS;
import static dev.sluice.sender.budget.BudgetConfigKeys.RESERVATION_MAX_MS;

import dev.sluice.config.ConfigKeySet;
import dev.sluice.config.Settings;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Everything the budget decides with, per bot: the limits, the live headroom, AIMD and the Redis outage
 * behaviour. Immutable; built from {@link Settings} and validated (a {@code ConfigException} names the key
 * and the value). Every key is defined once in {@link BudgetConfigKeys} (name, default, rule, doc) and read by
 * {@link BudgetConfigReader}; the {@link Builder} checks its values with the same rules. No thread owns it: immutable,
 * shared freely.
 */
public final class BudgetConfig {
    /** Every budget key, defined once in {@link BudgetConfigKeys}, and the per-bot families. */
    public static final ConfigKeySet KEYS = BudgetConfigKeys.ALL;

    /** What the sender does while Redis is unreachable ({@code budget.redis.outage.mode}). */
    public enum OutageMode {
        /** Decide locally at global rate / {@code budget.max.replicas}; per-chat limits for owned chats. */
        LOCAL_FALLBACK,
        /** Refuse with {@link Limit#UNAVAILABLE}: nothing is sent, messages wait in Kafka. */
        FAIL_CLOSED
    }

    /** After the Redis primary serving a bot changed ({@code budget.redis.failover.policy}). */
    public enum FailoverPolicy { DRAINED_RESTART, NONE }

    /** What a {@code maxmemory-policy} other than noeviction does at connect ({@code budget.redis.eviction.check}). */
    public enum EvictionCheck { WARN, REFUSE, OFF }

    private final BudgetLimits defaults;
    private final Map<String, Double> botRates;
    private final Map<String, BudgetLimits> botLimits;
    private final Set<String> paidBroadcastBots;
    private final double paidRatePerS;
    private final double backfillHeadroom;
    private final double aimdDecreaseFactor;
    private final double aimdIncreasePerS;
    private final double aimdFloor;
    private final OutageMode outageMode;
    private final FailoverPolicy failoverPolicy;
    private final EvictionCheck evictionCheck;
    private final int maxReplicas;
    private final Duration probeInterval;
    private final Duration reservationMax;
    private final Duration reservationLateMax;
    private final int arrivalGuardLimitPerS;
    private final int circuitMinimumCalls;
    private final Duration groupArrivalMargin;
    private final Duration globalArrivalMargin;
    /** What {@link #limitsFor} answers: the configured limits with the global margin applied, per bot and by default. */
    private final BudgetLimits effectiveDefaults;
    private final Map<String, BudgetLimits> effectiveByBot = new HashMap<>();

    private BudgetConfig(Builder b) {
        this.defaults = Objects.requireNonNull(b.defaults, "defaults");
        this.botRates = Collections.unmodifiableMap(new TreeMap<>(b.botRates));
        this.botLimits = Collections.unmodifiableMap(new TreeMap<>(b.botLimits));
        this.paidBroadcastBots = Collections.unmodifiableSet(new TreeSet<>(b.paidBroadcastBots));
        this.paidRatePerS = b.paidRatePerS;
        this.backfillHeadroom = b.backfillHeadroom;
        this.aimdDecreaseFactor = b.aimdDecreaseFactor;
        this.aimdIncreasePerS = b.aimdIncreasePerS;
        this.aimdFloor = b.aimdFloor;
        this.outageMode = b.outageMode;
        this.failoverPolicy = b.failoverPolicy;
        this.evictionCheck = b.evictionCheck;
        this.maxReplicas = b.maxReplicas;
        this.probeInterval = b.probeInterval;
        this.reservationMax = b.reservationMax;
        this.reservationLateMax = b.reservationLateMax;
        this.arrivalGuardLimitPerS = Math.toIntExact(ARRIVAL_GUARD_LIMIT.check((long) b.arrivalGuardLimitPerS));
        if (reservationLateMax != null) {
            RESERVATION_LATE_MAX_MS.check(reservationLateMax);
        }
        RESERVATION_MAX_MS.check(reservationMax);
        this.circuitMinimumCalls = Math.toIntExact(CIRCUIT_MINIMUM_CALLS.check((long) b.circuitMinimumCalls));
        this.groupArrivalMargin = GROUP_ARRIVAL_MARGIN_MS.check(b.groupArrivalMargin);
        this.globalArrivalMargin = GLOBAL_ARRIVAL_MARGIN_MS.check(b.globalArrivalMargin);
        this.effectiveDefaults = withMargin(defaults);
        botRates.forEach((bot, r) -> effectiveByBot.put(bot, withMargin(defaults.withGlobalRate(r))));
        paidBroadcastBots.forEach(bot -> effectiveByBot.put(bot, withMargin(defaults.withGlobalRate(paidRatePerS))));
        botLimits.forEach((bot, l) -> effectiveByBot.put(bot, withMargin(l)));
        BACKFILL_HEADROOM.check(backfillHeadroom);
        AIMD_DECREASE.check(aimdDecreaseFactor);
        AIMD_INCREASE.check(aimdIncreasePerS);
        AIMD_FLOOR.check(aimdFloor);
        PAID_RATE.check(paidRatePerS);
        MAX_REPLICAS.check((long) maxReplicas);
        PROBE_INTERVAL_MS.check(probeInterval);
        botRates.forEach((bot, r) -> BudgetConfigReader.check(r > 0 && r <= 1_000_000, "bot." + bot + BOT_RATE_SUFFIX, r,
                "0 < r <= 1000000"));
    }

    /** Reads the keys of {@link #KEYS}; every one is optional. See {@link BudgetConfigReader}. */
    public static BudgetConfig from(Settings s) {
        return BudgetConfigReader.read(s);
    }

    /** A config with these limits for every bot and the defaults for everything else. */
    public static BudgetConfig of(BudgetLimits limits) {
        return builder(limits).build();
    }

    public static Builder builder(BudgetLimits defaults) {
        return new Builder(defaults);
    }

    /** A builder starting from this config. */
    public Builder toBuilder() {
        Builder b = new Builder(defaults);
        b.botRates.putAll(botRates);
        b.botLimits.putAll(botLimits);
        b.paidBroadcastBots.addAll(paidBroadcastBots);
        return b.paidRatePerS(paidRatePerS).backfillHeadroom(backfillHeadroom)
                .aimd(aimdDecreaseFactor, aimdIncreasePerS, aimdFloor).outageMode(outageMode).failoverPolicy(failoverPolicy)
                .evictionCheck(evictionCheck).maxReplicas(maxReplicas).groupArrivalMargin(groupArrivalMargin)
                .globalArrivalMargin(globalArrivalMargin)
                .probeInterval(probeInterval).circuitMinimumCalls(circuitMinimumCalls).reservationMax(reservationMax)
                .reservationLateMax(reservationLateMax).arrivalGuardLimitPerS(arrivalGuardLimitPerS);
    }

    /**
     * The limits of one bot: the defaults with its global rate replaced by {@code bot.<id>.rate.per.s}, or by
     * the paid-broadcast rate when {@code bot.<id>.paid.broadcast=true}; limits set whole for that id (an HTTP
     * provider's {@code provider.<id>.rate.per.s} and {@code .burst}) win over both. Its global rate is the one
     * the budget grants at: the configured rate less {@code budget.global.arrival.margin.ms} (rate x 1000 / (1000 + ms)).
     * Computed once per bot at build: no allocation per call.
     */
    public BudgetLimits limitsFor(String botId) {
        BudgetLimits own = effectiveByBot.get(botId);
        return own != null ? own : effectiveDefaults;
    }

    /** The limits with the global interval stretched by {@code budget.global.arrival.margin.ms}: rate x 1000 / (1000 + ms). */
    private BudgetLimits withMargin(BudgetLimits l) {
        long ms = globalArrivalMargin.toMillis();
        return ms == 0 ? l : l.withGlobalRate(l.globalRatePerS() * 1000.0 / (1000.0 + ms));
    }

    public BudgetLimits defaults() {
        return defaults;
    }

    public Map<String, Double> botRates() {
        return botRates;
    }

    /** Limits set whole per bot or budget key (HTTP providers), see {@link Builder#botLimits}. */
    public Map<String, BudgetLimits> botLimits() {
        return botLimits;
    }

    public Set<String> paidBroadcastBots() {
        return paidBroadcastBots;
    }

    public double backfillHeadroom() {
        return backfillHeadroom;
    }

    /** Backfill headroom in parts per million, as the script takes it. */
    public long backfillHeadroomPpm() {
        return Math.round(backfillHeadroom * 1_000_000);
    }

    public double aimdDecreaseFactor() {
        return aimdDecreaseFactor;
    }

    public double aimdIncreasePerS() {
        return aimdIncreasePerS;
    }

    public double aimdFloor() {
        return aimdFloor;
    }

    public OutageMode outageMode() {
        return outageMode;
    }

    public FailoverPolicy failoverPolicy() {
        return failoverPolicy;
    }

    public EvictionCheck evictionCheck() {
        return evictionCheck;
    }

    public int maxReplicas() {
        return maxReplicas;
    }

    public Duration probeInterval() {
        return probeInterval;
    }

    /** {@code budget.reservation.max.ms}: how far ahead a live message may take the bot's next global slot. */
    public Duration reservationMax() {
        return reservationMax;
    }

    /**
     * {@code budget.reservation.late.max.ms}: how late after its slot a reserved send may still go out; empty
     * when not configured (then one interval of the bot's rate).
     */
    public java.util.Optional<Duration> reservationLateMax() {
        return java.util.Optional.ofNullable(reservationLateMax);
    }

    public int circuitMinimumCalls() {
        return circuitMinimumCalls;
    }

    /** {@code budget.arrival.guard.limit.per.s}: the provider's limit N per sliding second; 0 = the guard is off. */
    public int arrivalGuardLimitPerS() {
        return arrivalGuardLimitPerS;
    }

    /**
     * The guard's N for {@code botId}: {@code budget.arrival.guard.limit.per.s}, except for a bot whose provider allows
     * it more: a paid broadcast bot (Telegram counts it against {@code budget.paid.broadcast.rate.per.s}) and an HTTP
     * provider (limits set whole, another provider's) take their own rate, rounded down, when that is higher; 0 when
     * the guard is off. With one N for every bot, a paid bot met a floor at every N-th grant after a late answer, as if
     * Telegram allowed it 30 per second.
     */
    public int arrivalGuardLimitFor(String botId) {
        if (arrivalGuardLimitPerS <= 0) {
            return 0;
        }
        BudgetLimits own = botLimits.get(botId);
        double rate = own != null ? own.globalRatePerS() : paidBroadcastBots.contains(botId) ? paidRatePerS : 0;
        return (int) Math.max(arrivalGuardLimitPerS, Math.min(1_000_000, Math.floor(rate)));
    }

    /** {@code budget.group.arrival.margin.ms}: arrival jitter the group limit absorbs, {@link BudgetLimits#groupIntervalMicros(long)}. */
    public Duration groupArrivalMargin() {
        return groupArrivalMargin;
    }

    /** {@code budget.global.arrival.margin.ms}: arrival jitter every bot's global limit absorbs ({@link #limitsFor}). */
    public Duration globalArrivalMargin() {
        return globalArrivalMargin;
    }

    /**
     * The arrival guard's slack for {@code botId}: how much later than its slot a call may be answered before it is
     * reported ({@link BudgetPort#reportLateAnswer}); N = {@link #arrivalGuardLimitFor}. Any N + 1 consecutive grants of a GCRA at rate r with burst b
     * span at least (N + 1 &minus; b) &times; 1000/r ms, so a call that arrived at most that minus 1000 ms after its
     * slot cannot share a second with the N grants after it. Never negative (a rate at or above N: every answer
     * later than its slot is reported).
     */
    public Duration arrivalSlack(String botId) {
        BudgetLimits l = limitsFor(botId);
        double spanMs = (arrivalGuardLimitFor(botId) + 1 - l.globalBurst()) * 1000.0 / l.globalRatePerS();
        return Duration.ofNanos(Math.max(0, Math.round((spanMs - 1000.0) * 1e6)));
    }

    /**
     * The config a local fallback decides with: every bot's global rate divided by N =
     * {@code budget.max.replicas} and the global burst too (at least 1), so N replicas deciding alone admit at
     * most N·max(1, ⌊b/N⌋) + r·T together in any interval T.
     */
    public BudgetConfig fallbackShare() {
        Builder b = toBuilder();
        b.paidBroadcastBots.clear();
        b.botRates.clear();
        b.arrivalGuardLimitPerS(0); // fallback grants are not numbered: reports go to Redis only
        b.defaults = defaults.replicaShare(maxReplicas);
        botRates.forEach((bot, r) -> b.botRate(bot, r / maxReplicas));
        b.botLimits.clear();
        botLimits.forEach((bot, l) -> b.botLimits(bot, l.replicaShare(maxReplicas)));
        paidBroadcastBots.forEach(bot -> b.botRate(bot, paidRatePerS / maxReplicas));
        return b.build();
    }

    @Override
    public String toString() {
        return "BudgetConfig{" + defaults + ", botRates=" + botRates + (botLimits.isEmpty() ? "" : ", botLimits="
                + botLimits) + ", paidBroadcast=" + paidBroadcastBots
                + ", headroom=" + backfillHeadroom + ", aimd=" + aimdDecreaseFactor + "/" + aimdIncreasePerS + "/"
                + aimdFloor + ", outage=" + outageMode + ", failover=" + failoverPolicy + ", maxReplicas=" + maxReplicas + ", probe="
                + probeInterval.toMillis() + "ms" + (arrivalGuardLimitPerS > 0 ? ", arrivalGuard=" + arrivalGuardLimitPerS
                + "/s" : "") + ", groupArrivalMargin=" + groupArrivalMargin.toMillis() + "ms, globalArrivalMargin="
                + globalArrivalMargin.toMillis() + "ms}";
    }

    /** Builder for tests and tools; {@link #build()} validates like {@link #from(Settings)}. */
    public static final class Builder {
        private BudgetLimits defaults;
        private final Map<String, Double> botRates = new TreeMap<>();
        private final Map<String, BudgetLimits> botLimits = new TreeMap<>();
        private final Set<String> paidBroadcastBots = new TreeSet<>();
        private double paidRatePerS = PAID_RATE.defaultValue();
        private double backfillHeadroom = BACKFILL_HEADROOM.defaultValue();
        private double aimdDecreaseFactor = AIMD_DECREASE.defaultValue();
        private double aimdIncreasePerS = AIMD_INCREASE.defaultValue();
        private double aimdFloor = AIMD_FLOOR.defaultValue();
        private OutageMode outageMode = OUTAGE_MODE.defaultValue();
        private FailoverPolicy failoverPolicy = BudgetConfigKeys.FAILOVER_POLICY.defaultValue();
        private EvictionCheck evictionCheck = BudgetConfigKeys.EVICTION_CHECK.defaultValue();
        private int maxReplicas = Math.toIntExact(MAX_REPLICAS.defaultValue());
        private Duration probeInterval = PROBE_INTERVAL_MS.defaultValue();
        private Duration reservationMax = RESERVATION_MAX_MS.defaultValue();
        private Duration reservationLateMax = RESERVATION_LATE_MAX_MS.defaultValue();
        private int arrivalGuardLimitPerS = Math.toIntExact(ARRIVAL_GUARD_LIMIT.defaultValue());
        private int circuitMinimumCalls = Math.toIntExact(CIRCUIT_MINIMUM_CALLS.defaultValue());
        private Duration groupArrivalMargin = GROUP_ARRIVAL_MARGIN_MS.defaultValue();
        /** Zero here, unlike the key's default: limits passed in code are granted as given; {@link #from} sets the key's. */
        private Duration globalArrivalMargin = Duration.ZERO;

        private Builder(BudgetLimits defaults) {
            this.defaults = Objects.requireNonNull(defaults, "defaults");
        }

        public Builder botRate(String botId, double ratePerS) {
            BudgetKeys.tag(botId);
            botRates.put(botId, ratePerS);
            return this;
        }

        /**
         * All limits of one bot or budget key, replacing the defaults, the per-bot rate and paid broadcast for
         * it (HTTP providers: {@code provider.<id>.rate.per.s}, {@code .burst}).
         */
        public Builder botLimits(String botId, BudgetLimits limits) {
            BudgetKeys.tag(botId);
            botLimits.put(botId, Objects.requireNonNull(limits, "limits"));
            return this;
        }

        public Builder paidBroadcast(String botId) {
            BudgetKeys.tag(botId);
            paidBroadcastBots.add(botId);
            return this;
        }

        public Builder paidRatePerS(double r) {
            this.paidRatePerS = r;
            return this;
        }

        public Builder backfillHeadroom(double h) {
            this.backfillHeadroom = h;
            return this;
        }

        public Builder aimd(double decreaseFactor, double increasePerS, double floor) {
            this.aimdDecreaseFactor = decreaseFactor;
            this.aimdIncreasePerS = increasePerS;
            this.aimdFloor = floor;
            return this;
        }

        public Builder outageMode(OutageMode m) {
            this.outageMode = Objects.requireNonNull(m, "outageMode");
            return this;
        }

        public Builder failoverPolicy(FailoverPolicy p) {
            this.failoverPolicy = Objects.requireNonNull(p, "failoverPolicy");
            return this;
        }

        public Builder evictionCheck(EvictionCheck c) {
            this.evictionCheck = Objects.requireNonNull(c, "evictionCheck");
            return this;
        }

        public Builder maxReplicas(int n) {
            this.maxReplicas = n;
            return this;
        }

        public Builder reservationMax(Duration d) {
            this.reservationMax = Objects.requireNonNull(d, "reservationMax");
            return this;
        }

        /** How late a reserved send may still go out; null: one interval of the bot's rate. */
        public Builder reservationLateMax(Duration d) {
            this.reservationLateMax = d;
            return this;
        }

        /** The provider's limit N per sliding second for the arrival guard; 0 = off. */
        public Builder arrivalGuardLimitPerS(int n) {
            this.arrivalGuardLimitPerS = n;
            return this;
        }

        /** The arrival jitter the group limit absorbs ({@code budget.group.arrival.margin.ms}); zero = none. */
        public Builder groupArrivalMargin(Duration d) {
            this.groupArrivalMargin = Objects.requireNonNull(d, "groupArrivalMargin");
            return this;
        }

        /**
         * The arrival jitter every bot's global limit absorbs ({@code budget.global.arrival.margin.ms}); zero = none, the
         * builder's default: a config built in code grants at exactly the limits it was given, one read from settings
         * ({@link BudgetConfig#from}) has the key's default (50 ms) unless set.
         */
        public Builder globalArrivalMargin(Duration d) {
            this.globalArrivalMargin = Objects.requireNonNull(d, "globalArrivalMargin");
            return this;
        }

        public Builder probeInterval(Duration d) {
            this.probeInterval = Objects.requireNonNull(d, "probeInterval");
            return this;
        }

        public Builder circuitMinimumCalls(int n) {
            this.circuitMinimumCalls = n;
            return this;
        }

        public BudgetConfig build() {
            return new BudgetConfig(this);
        }
    }
}
