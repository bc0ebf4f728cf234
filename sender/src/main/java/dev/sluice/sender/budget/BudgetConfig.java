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
import static dev.sluice.sender.budget.BudgetConfigKeys.PAID_RATE;
import static dev.sluice.sender.budget.BudgetConfigKeys.PROBE_INTERVAL_MS;
import static dev.sluice.sender.budget.BudgetConfigKeys.RESERVATION_LATE_MAX_MS;
import static dev.sluice.sender.budget.BudgetConfigKeys.RESERVATION_MAX_MS;

import dev.sluice.config.ConfigKeySet;
import dev.sluice.config.Settings;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Everything the budget decides with, per bot: the limits, the live headroom, AIMD and the Redis outage
 * behaviour. Immutable; built from {@link Settings} and validated (a {@code ConfigException} names the key
 * and the value). Every key is defined once in {@link BudgetConfigKeys} (name, default, rule, doc) and read by
 * {@link BudgetConfigReader}; the {@link BudgetConfigBuilder} checks its values with the same rules. No thread owns it: immutable,
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
    private final SharedLimitsCheck.Policy limitsCheck;
    private final int maxReplicas;
    private final Duration probeInterval;
    private final Duration reservationMax;
    /** As configured (null: the same as {@link #reservationMax}); {@link #reservationRoutineMax} caps it. */
    private final Duration reservationRoutineMax;
    private final Duration reservationCriticalMemory;
    private final Duration penaltyProbeWindow;
    private final Duration reservationLateMax;
    private final int arrivalGuardLimitPerS;
    private final int circuitMinimumCalls;
    private final Duration groupArrivalMargin;
    private final Duration globalArrivalMargin;
    /** Per bot, resolved once: what {@link #limitsFor} and {@link #arrivalGuardLimitFor} answer. */
    private final BotLimitTable table;

    BudgetConfig(BudgetConfigBuilder b) {
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
        this.limitsCheck = b.limitsCheck;
        this.maxReplicas = b.maxReplicas;
        this.probeInterval = b.probeInterval;
        this.reservationMax = b.reservationMax;
        this.reservationRoutineMax = b.reservationRoutineMax;
        this.reservationCriticalMemory = BudgetConfigKeys.RESERVATION_CRITICAL_MEMORY_MS.check(
                b.reservationCriticalMemory);
        this.penaltyProbeWindow = BudgetConfigKeys.PENALTY_PROBE_WINDOW_MS.check(b.penaltyProbeWindow);
        this.reservationLateMax = b.reservationLateMax;
        this.arrivalGuardLimitPerS = Math.toIntExact(ARRIVAL_GUARD_LIMIT.check((long) b.arrivalGuardLimitPerS));
        if (reservationLateMax != null) {
            RESERVATION_LATE_MAX_MS.check(reservationLateMax);
        }
        RESERVATION_MAX_MS.check(reservationMax);
        if (reservationRoutineMax != null) {
            BudgetConfigKeys.RESERVATION_ROUTINE_MAX_MS.check(reservationRoutineMax);
        }
        this.circuitMinimumCalls = Math.toIntExact(CIRCUIT_MINIMUM_CALLS.check((long) b.circuitMinimumCalls));
        this.groupArrivalMargin = GROUP_ARRIVAL_MARGIN_MS.check(b.groupArrivalMargin);
        this.globalArrivalMargin = GLOBAL_ARRIVAL_MARGIN_MS.check(b.globalArrivalMargin);
        this.table = new BotLimitTable(defaults, botRates, paidBroadcastBots, paidRatePerS, botLimits, arrivalGuardLimitPerS,
                globalArrivalMargin);
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

    public static BudgetConfigBuilder builder(BudgetLimits defaults) {
        return new BudgetConfigBuilder(defaults);
    }

    /** A builder starting from this config. */
    public BudgetConfigBuilder toBuilder() {
        BudgetConfigBuilder b = new BudgetConfigBuilder(defaults);
        b.botRates.putAll(botRates);
        b.botLimits.putAll(botLimits);
        b.paidBroadcastBots.addAll(paidBroadcastBots);
        return b.paidRatePerS(paidRatePerS).backfillHeadroom(backfillHeadroom)
                .aimd(aimdDecreaseFactor, aimdIncreasePerS, aimdFloor).outageMode(outageMode).failoverPolicy(failoverPolicy)
                .evictionCheck(evictionCheck).limitsCheck(limitsCheck).maxReplicas(maxReplicas).groupArrivalMargin(groupArrivalMargin)
                .globalArrivalMargin(globalArrivalMargin)
                .probeInterval(probeInterval).circuitMinimumCalls(circuitMinimumCalls).reservationMax(reservationMax)
                .reservationRoutineMax(reservationRoutineMax).reservationCriticalMemory(reservationCriticalMemory)
                .penaltyProbeWindow(penaltyProbeWindow)
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
        return table.limitsFor(botId);
    }

    /** What {@code botId} is configured with, by the same precedence as {@link #limitsFor}, before the margin. */
    public BudgetLimits configuredLimitsFor(String botId) {
        return table.configuredLimitsFor(botId);
    }

    public BudgetLimits defaults() {
        return defaults;
    }

    public Map<String, Double> botRates() {
        return botRates;
    }

    /** Limits set whole per bot or budget key (HTTP providers), see {@link BudgetConfigBuilder#botLimits}. */
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

    /** {@code budget.limits.check}: what a disagreement with another sender's limits does ({@link SharedLimitsCheck}). */
    public SharedLimitsCheck.Policy limitsCheck() {
        return limitsCheck;
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
     * {@code budget.reservation.routine.max.ms}, at most {@link #reservationMax}: the horizon of routine lanes. A
     * config built in code without it uses {@link #reservationMax} for every lane.
     */
    public Duration reservationRoutineMax() {
        if (reservationRoutineMax == null || reservationRoutineMax.compareTo(reservationMax) > 0) {
            return reservationMax;
        }
        return reservationRoutineMax;
    }

    /**
     * Whether the routine horizon was given (always when read from settings: the key has a default); a config built
     * in code without it lets routine requests reserve as far as they ask, as urgent ones.
     */
    boolean reservationRoutineMaxSet() {
        return reservationRoutineMax != null;
    }

    /**
     * {@code budget.reservation.critical.memory.ms}: how long a CRITICAL grant of a bot holds its routine lanes to
     * {@link #reservationRoutineMax} (on every sender, through Redis); {@link Duration#ZERO}: always.
     */
    public Duration reservationCriticalMemory() {
        return reservationCriticalMemory;
    }

    /**
     * {@code budget.penalty.probe.window.ms}: after a bot gate lifts, how long every call of the bot but the first (the
     * probe) waits after the probe's slot; {@link Duration#ZERO}: no probe.
     */
    public Duration penaltyProbeWindow() {
        return penaltyProbeWindow;
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
     * The guard's N for {@code botId}: {@code budget.arrival.guard.limit.per.s}, or the bot's own configured global
     * rate (before the margin, rounded down) when that is higher: a paid broadcast bot, an HTTP provider (limits set
     * whole) or a bot or deployment configured above N is counted against its configured rate; 0 when the guard is
     * off. With one N for every bot, such a bot met a floor at every N-th grant after a late answer.
     */
    public int arrivalGuardLimitFor(String botId) {
        return table.arrivalGuardLimitFor(botId);
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
        return table.arrivalSlack(botId);
    }

    /**
     * The config a local fallback decides with: every bot's global rate divided by N =
     * {@code budget.max.replicas} and the global burst too (at least 1), so N replicas deciding alone admit at
     * most N·max(1, ⌊b/N⌋) + r·T together in any interval T.
     */
    public BudgetConfig fallbackShare() {
        BudgetConfigBuilder b = toBuilder();
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
}
