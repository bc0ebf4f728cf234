package dev.sluice.sender.budget;

import static dev.sluice.sender.budget.BudgetConfigKeys.AIMD_DECREASE;
import static dev.sluice.sender.budget.BudgetConfigKeys.AIMD_FLOOR;
import static dev.sluice.sender.budget.BudgetConfigKeys.AIMD_INCREASE;
import static dev.sluice.sender.budget.BudgetConfigKeys.BACKFILL_HEADROOM;
import static dev.sluice.sender.budget.BudgetConfigKeys.CIRCUIT_MINIMUM_CALLS;
import static dev.sluice.sender.budget.BudgetConfigKeys.GROUP_ARRIVAL_MARGIN_MS;
import static dev.sluice.sender.budget.BudgetConfigKeys.MAX_REPLICAS;
import static dev.sluice.sender.budget.BudgetConfigKeys.OUTAGE_MODE;
import static dev.sluice.sender.budget.BudgetConfigKeys.PAID_RATE;
import static dev.sluice.sender.budget.BudgetConfigKeys.PROBE_INTERVAL_MS;
import static dev.sluice.sender.budget.BudgetConfigKeys.RESERVATION_LATE_MAX_MS;

import dev.sluice.sender.budget.BudgetConfig.EvictionCheck;
import dev.sluice.sender.budget.BudgetConfig.FailoverPolicy;
import dev.sluice.sender.budget.BudgetConfig.OutageMode;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Builds a {@link BudgetConfig}, for tests and tools; {@link #build()} validates like {@link BudgetConfig#from}. Not
 * thread-safe: one thread builds.
 */
public final class BudgetConfigBuilder {
    BudgetLimits defaults;
    final Map<String, Double> botRates = new TreeMap<>();
    final Map<String, BudgetLimits> botLimits = new TreeMap<>();
    final Set<String> paidBroadcastBots = new TreeSet<>();
    double paidRatePerS = PAID_RATE.defaultValue();
    double backfillHeadroom = BACKFILL_HEADROOM.defaultValue();
    double aimdDecreaseFactor = AIMD_DECREASE.defaultValue();
    double aimdIncreasePerS = AIMD_INCREASE.defaultValue();
    double aimdFloor = AIMD_FLOOR.defaultValue();
    OutageMode outageMode = OUTAGE_MODE.defaultValue();
    FailoverPolicy failoverPolicy = BudgetConfigKeys.FAILOVER_POLICY.defaultValue();
    EvictionCheck evictionCheck = BudgetConfigKeys.EVICTION_CHECK.defaultValue();
    SharedLimitsCheck.Policy limitsCheck = BudgetConfigKeys.LIMITS_CHECK.defaultValue();
    int maxReplicas = Math.toIntExact(MAX_REPLICAS.defaultValue());
    Duration probeInterval = PROBE_INTERVAL_MS.defaultValue();
    /*
     * Off here, unlike the keys' defaults (reservations 500 ms, the arrival guard at 30, the global margin 50 ms): a
     * config built in code decides exactly as told, with limits granted as given and every refusal a refusal;
     * {@link BudgetConfig#from} sets the keys' defaults.
     */
    Duration reservationMax = Duration.ZERO;
    /** Null: routine lanes reserve as far as {@link #reservationMax} (a config built in code decides as told). */
    Duration reservationRoutineMax = null;
    Duration reservationCriticalMemory = BudgetConfigKeys.RESERVATION_CRITICAL_MEMORY_MS.defaultValue();
    /** Off here (a config built in code decides as told); {@link BudgetConfig#from} sets the key's default. */
    Duration penaltyProbeWindow = Duration.ZERO;
    int arrivalGuardLimitPerS = 0;
    Duration globalArrivalMargin = Duration.ZERO;
    Duration reservationLateMax = RESERVATION_LATE_MAX_MS.defaultValue();
    int circuitMinimumCalls = Math.toIntExact(CIRCUIT_MINIMUM_CALLS.defaultValue());
    Duration groupArrivalMargin = GROUP_ARRIVAL_MARGIN_MS.defaultValue();

    BudgetConfigBuilder(BudgetLimits defaults) {
        this.defaults = Objects.requireNonNull(defaults, "defaults");
    }

    public BudgetConfigBuilder botRate(String botId, double ratePerS) {
        BudgetKeys.tag(botId);
        botRates.put(botId, ratePerS);
        return this;
    }

    /**
     * All limits of one bot or budget key, replacing the defaults, the per-bot rate and paid broadcast for
     * it (HTTP providers: {@code provider.<id>.rate.per.s}, {@code .burst}).
     */
    public BudgetConfigBuilder botLimits(String botId, BudgetLimits limits) {
        BudgetKeys.tag(botId);
        botLimits.put(botId, Objects.requireNonNull(limits, "limits"));
        return this;
    }

    public BudgetConfigBuilder paidBroadcast(String botId) {
        BudgetKeys.tag(botId);
        paidBroadcastBots.add(botId);
        return this;
    }

    public BudgetConfigBuilder paidRatePerS(double r) {
        this.paidRatePerS = r;
        return this;
    }

    public BudgetConfigBuilder backfillHeadroom(double h) {
        this.backfillHeadroom = h;
        return this;
    }

    public BudgetConfigBuilder aimd(double decreaseFactor, double increasePerS, double floor) {
        this.aimdDecreaseFactor = decreaseFactor;
        this.aimdIncreasePerS = increasePerS;
        this.aimdFloor = floor;
        return this;
    }

    public BudgetConfigBuilder outageMode(OutageMode m) {
        this.outageMode = Objects.requireNonNull(m, "outageMode");
        return this;
    }

    public BudgetConfigBuilder failoverPolicy(FailoverPolicy p) {
        this.failoverPolicy = Objects.requireNonNull(p, "failoverPolicy");
        return this;
    }

    public BudgetConfigBuilder evictionCheck(EvictionCheck c) {
        this.evictionCheck = Objects.requireNonNull(c, "evictionCheck");
        return this;
    }

    public BudgetConfigBuilder limitsCheck(SharedLimitsCheck.Policy p) {
        this.limitsCheck = Objects.requireNonNull(p, "limitsCheck");
        return this;
    }

    public BudgetConfigBuilder maxReplicas(int n) {
        this.maxReplicas = n;
        return this;
    }

    public BudgetConfigBuilder reservationMax(Duration d) {
        this.reservationMax = Objects.requireNonNull(d, "reservationMax");
        return this;
    }

    /** The reservation horizon of routine lanes, capped by {@link #reservationMax}; null: the same. */
    public BudgetConfigBuilder reservationRoutineMax(Duration d) {
        this.reservationRoutineMax = d;
        return this;
    }

    /** How long a CRITICAL grant holds the bot's routine lanes to the routine horizon (0: always). */
    public BudgetConfigBuilder reservationCriticalMemory(Duration d) {
        this.reservationCriticalMemory = Objects.requireNonNull(d, "reservationCriticalMemory");
        return this;
    }

    /** After a bot gate lifts, how long every call but the first (the probe) waits after the probe's slot (0: off). */
    public BudgetConfigBuilder penaltyProbeWindow(Duration d) {
        this.penaltyProbeWindow = Objects.requireNonNull(d, "penaltyProbeWindow");
        return this;
    }

    /** How late a reserved send may still go out; null: one interval of the bot's rate. */
    public BudgetConfigBuilder reservationLateMax(Duration d) {
        this.reservationLateMax = d;
        return this;
    }

    /** The provider's limit N per sliding second for the arrival guard; 0 = off. */
    public BudgetConfigBuilder arrivalGuardLimitPerS(int n) {
        this.arrivalGuardLimitPerS = n;
        return this;
    }

    /** The arrival jitter the group limit absorbs ({@code budget.group.arrival.margin.ms}); zero = none. */
    public BudgetConfigBuilder groupArrivalMargin(Duration d) {
        this.groupArrivalMargin = Objects.requireNonNull(d, "groupArrivalMargin");
        return this;
    }

    /**
     * The arrival jitter every bot's global limit absorbs ({@code budget.global.arrival.margin.ms}); zero = none, the
     * builder's default: a config built in code grants at exactly the limits it was given, one read from settings
     * ({@link BudgetConfig#from}) has the key's default (50 ms) unless set.
     */
    public BudgetConfigBuilder globalArrivalMargin(Duration d) {
        this.globalArrivalMargin = Objects.requireNonNull(d, "globalArrivalMargin");
        return this;
    }

    public BudgetConfigBuilder probeInterval(Duration d) {
        this.probeInterval = Objects.requireNonNull(d, "probeInterval");
        return this;
    }

    public BudgetConfigBuilder circuitMinimumCalls(int n) {
        this.circuitMinimumCalls = n;
        return this;
    }

    public BudgetConfig build() {
        return new BudgetConfig(this);
    }
}
