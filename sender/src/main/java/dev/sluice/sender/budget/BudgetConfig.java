package dev.sluice.sender.budget;

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
 * and the value).
 *
 * <table>
 * <caption>Keys</caption>
 * <tr><td>{@code budget.global.rate.per.s}, {@code budget.global.burst}</td><td>default 30, 1 (Telegram FAQ:
 *     about 30 messages per second per bot)</td></tr>
 * <tr><td>{@code budget.chat.rate.per.s}, {@code budget.chat.burst}</td><td>default 1, 3 (Telegram FAQ: about
 *     1 message per second per chat, short bursts tolerated)</td></tr>
 * <tr><td>{@code budget.group.rate.per.min}, {@code budget.group.burst}</td><td>default 20, 1 (Telegram FAQ: 20
 *     messages per minute per group); applies to negative chat ids and {@code @channel} names</td></tr>
 * <tr><td>{@code bot.<id>.rate.per.s}</td><td>this bot's global rate, overriding the default</td></tr>
 * <tr><td>{@code bot.<id>.paid.broadcast}</td><td>true: the bot sends with {@code allow_paid_broadcast}; its
 *     global rate is {@code budget.paid.broadcast.rate.per.s} (default 1000, Telegram's paid limit)</td></tr>
 * <tr><td>{@code budget.backfill.headroom}</td><td>share of the global rate reserved for live traffic, 0 &le; h
 *     &lt; 1, default 0.2; see {@link RedisGcraBudget} for the exact rule</td></tr>
 * <tr><td>{@code budget.aimd.decrease.factor}</td><td>after a bot-wide 429 the rate is multiplied by this, 0 &lt;
 *     f &le; 1, default 0.5</td></tr>
 * <tr><td>{@code budget.aimd.increase.per.s}</td><td>then it climbs back by this share of the configured rate per
 *     second, &gt; 0, default 0.05 (from half to full in 10 s)</td></tr>
 * <tr><td>{@code budget.aimd.floor}</td><td>the lowest multiplier, 0.001 &le; floor &le; 1, default 0.1</td></tr>
 * <tr><td>{@code budget.redis.outage.mode}</td><td>{@code local-fallback} (default) or {@code fail-closed}</td></tr>
 * <tr><td>{@code budget.max.replicas}</td><td>sender replicas that may fall back at once: in local fallback each
 *     decides at global rate / this, default 3</td></tr>
 * <tr><td>{@code budget.redis.probe.interval.ms}</td><td>how long the circuit stays open before a half-open
 *     probe of Redis; also the wait of a fail-closed refusal; default 1000</td></tr>
 * <tr><td>{@code budget.circuit.minimum.calls}</td><td>failed calls in a row that open the circuit, default 3</td></tr>
 * <tr><td>{@code budget.reservation.max.ms}</td><td>how far ahead the sender may take the bot's next global slot
 *     instead of a refusal (live messages whose chat and group limits pass now; see {@code budget.lua}), so
 *     replicas asking for the same bot do not collide and waiting lanes are decided in batches (fewer than one
 *     Redis round trip per delivered message); 0 = never reserve (default). With reservations the bot runs at
 *     exactly its configured rate: configure it with a margin below the provider's limit (the demo: 25 of
 *     30/s), since the provider counts arrivals and a late send may bunch with the next slot, or turn on the
 *     arrival guard below</td></tr>
 * <tr><td>{@code budget.reservation.late.max.ms}</td><td>how late after its reserved slot a send may still go
 *     out; later, the slot passes unused and the lane asks again. A provider that counts arrivals in a sliding
 *     window (Telegram: 30 per second) refuses the 31st call in any second, so a send late by more than the
 *     window's slack, 30 &times; (1000/rate &minus; 1000/30) ms, bunches with the next slots and costs a bot-wide
 *     429. Set it to about half that slack when the rate is close to the limit (29.8/s: slack 6.7 ms, late
 *     max 3). Default: one interval of the bot's rate</td></tr>
 * <tr><td>{@code budget.arrival.guard.limit.per.s}</td><td>the arrival guard, for a provider that counts calls as
 *     they arrive in a sliding second (Telegram: 30 per bot): set it to that limit N and a call answered later
 *     after its slot than the window's slack ((N + 1 &minus; burst) &times; 1000/rate &minus; 1000 ms) makes the
 *     bot's N-th grant after it wait until one second after the answer ({@link BudgetPort#reportLateAnswer}).
 *     Arrival jitter (GC pauses, a slow network path) then costs a little rate instead of a 429. Costs one more
 *     Redis round trip per late answer. 0 = off (default)</td></tr>
 * </table>
 */
public final class BudgetConfig {
    public static final String GLOBAL_RATE = "budget.global.rate.per.s";
    public static final String GLOBAL_BURST = "budget.global.burst";
    public static final String CHAT_RATE = "budget.chat.rate.per.s";
    public static final String CHAT_BURST = "budget.chat.burst";
    public static final String GROUP_RATE = "budget.group.rate.per.min";
    public static final String GROUP_BURST = "budget.group.burst";
    public static final String BOT_RATE_SUFFIX = ".rate.per.s";
    public static final String BOT_PAID_SUFFIX = ".paid.broadcast";
    public static final String PAID_RATE = "budget.paid.broadcast.rate.per.s";
    public static final String BACKFILL_HEADROOM = "budget.backfill.headroom";
    public static final String AIMD_DECREASE = "budget.aimd.decrease.factor";
    public static final String AIMD_INCREASE = "budget.aimd.increase.per.s";
    public static final String AIMD_FLOOR = "budget.aimd.floor";
    public static final String OUTAGE_MODE = "budget.redis.outage.mode";
    public static final String MAX_REPLICAS = "budget.max.replicas";
    public static final String ARRIVAL_GUARD_LIMIT = "budget.arrival.guard.limit.per.s";
    public static final String PROBE_INTERVAL_MS = "budget.redis.probe.interval.ms";
    public static final String CIRCUIT_MINIMUM_CALLS = "budget.circuit.minimum.calls";
    public static final String RESERVATION_MAX_MS = "budget.reservation.max.ms";
    public static final String RESERVATION_LATE_MAX_MS = "budget.reservation.late.max.ms";

    /** Telegram Bot API: with {@code allow_paid_broadcast} up to 1000 messages per second. */
    public static final double TELEGRAM_PAID_BROADCAST_RATE_PER_S = 1000;

    /** What the sender does while Redis is unreachable ({@code budget.redis.outage.mode}). */
    public enum OutageMode {
        /** Decide locally at global rate / {@code budget.max.replicas}; per-chat limits for owned chats. */
        LOCAL_FALLBACK,
        /** Refuse with {@link Limit#UNAVAILABLE}: nothing is sent, messages wait in Kafka. */
        FAIL_CLOSED
    }

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
    private final int maxReplicas;
    private final Duration probeInterval;
    private final Duration reservationMax;
    private final Duration reservationLateMax;
    private final int arrivalGuardLimitPerS;
    private final int circuitMinimumCalls;

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
        this.maxReplicas = b.maxReplicas;
        this.probeInterval = b.probeInterval;
        this.reservationMax = b.reservationMax;
        this.reservationLateMax = b.reservationLateMax;
        this.arrivalGuardLimitPerS = b.arrivalGuardLimitPerS;
        check(arrivalGuardLimitPerS >= 0 && arrivalGuardLimitPerS <= 1_000_000, ARRIVAL_GUARD_LIMIT,
                arrivalGuardLimitPerS, "0 (off) <= N <= 1000000");
        check(reservationLateMax == null || (!reservationLateMax.isNegative() && reservationLateMax.toMillis() <= 60_000),
                RESERVATION_LATE_MAX_MS, reservationLateMax == null ? -1 : reservationLateMax.toMillis(), "0 <= ms <= 60000");
        check(!reservationMax.isNegative() && reservationMax.toMillis() <= 60_000, RESERVATION_MAX_MS,
                reservationMax.toMillis(), "0 <= ms <= 60000");
        this.circuitMinimumCalls = b.circuitMinimumCalls;
        check(backfillHeadroom >= 0 && backfillHeadroom < 1, BACKFILL_HEADROOM, backfillHeadroom, "0 <= h < 1");
        check(aimdDecreaseFactor > 0 && aimdDecreaseFactor <= 1, AIMD_DECREASE, aimdDecreaseFactor, "0 < f <= 1");
        check(aimdIncreasePerS > 0 && aimdIncreasePerS <= 1000, AIMD_INCREASE, aimdIncreasePerS, "0 < x <= 1000");
        check(aimdFloor >= 0.001 && aimdFloor <= 1, AIMD_FLOOR, aimdFloor, "0.001 <= floor <= 1");
        check(paidRatePerS > 0 && paidRatePerS <= 1_000_000, PAID_RATE, paidRatePerS, "0 < r <= 1000000");
        check(maxReplicas >= 1, MAX_REPLICAS, maxReplicas, "an integer >= 1");
        check(circuitMinimumCalls >= 1, CIRCUIT_MINIMUM_CALLS, circuitMinimumCalls, "an integer >= 1");
        check(!probeInterval.isNegative() && !probeInterval.isZero(), PROBE_INTERVAL_MS, probeInterval.toMillis(),
                "a positive number of milliseconds");
        botRates.forEach((bot, r) -> check(r > 0 && r <= 1_000_000, "bot." + bot + BOT_RATE_SUFFIX, r, "0 < r <= 1000000"));
    }

    private static void check(boolean ok, String key, Object value, String rule) {
        if (!ok) {
            throw Settings.invalid(key, String.valueOf(value), rule);
        }
    }

    /** Reads the keys listed in the class comment; every one is optional. */
    public static BudgetConfig from(Settings s) {
        Builder b = builder(new BudgetLimits(
                s.positiveDouble(GLOBAL_RATE, 30), s.positiveInt(GLOBAL_BURST, 1),
                s.positiveDouble(CHAT_RATE, 1), s.positiveInt(CHAT_BURST, 3),
                s.positiveDouble(GROUP_RATE, BudgetLimits.TELEGRAM_GROUP_RATE_PER_MIN), s.positiveInt(GROUP_BURST, 1)));
        s.withPrefix("bot.").forEach((rest, value) -> {
            if (rest.endsWith(BOT_RATE_SUFFIX)) {
                String bot = botId(rest, BOT_RATE_SUFFIX);
                b.botRate(bot, s.positiveDouble("bot." + rest, 1));
            } else if (rest.endsWith(BOT_PAID_SUFFIX)) {
                String bot = botId(rest, BOT_PAID_SUFFIX);
                if (s.bool("bot." + rest, false)) {
                    b.paidBroadcast(bot);
                }
            }
        });
        return b.paidRatePerS(s.positiveDouble(PAID_RATE, TELEGRAM_PAID_BROADCAST_RATE_PER_S))
                .backfillHeadroom(fraction(s, BACKFILL_HEADROOM, 0.2))
                .aimd(fraction(s, AIMD_DECREASE, 0.5), s.positiveDouble(AIMD_INCREASE, 0.05), fraction(s, AIMD_FLOOR, 0.1))
                .outageMode(s.enumValue(OUTAGE_MODE, OutageMode.class, OutageMode.LOCAL_FALLBACK))
                .maxReplicas(s.positiveInt(MAX_REPLICAS, 3))
                .probeInterval(Duration.ofMillis(s.positiveLong(PROBE_INTERVAL_MS, 1000)))
                .reservationMax(Duration.ofMillis(nonNegativeLong(s, RESERVATION_MAX_MS, 0)))
                .reservationLateMax(s.string(RESERVATION_LATE_MAX_MS, "").isBlank() ? null
                        : Duration.ofMillis(nonNegativeLong(s, RESERVATION_LATE_MAX_MS, 0)))
                .circuitMinimumCalls(s.positiveInt(CIRCUIT_MINIMUM_CALLS, 3))
                .arrivalGuardLimitPerS(Math.toIntExact(nonNegativeLong(s, ARRIVAL_GUARD_LIMIT, 0)))
                .build();
    }

    private static long nonNegativeLong(Settings s, String key, long defaultValue) {
        String raw = s.string(key, null);
        if (raw == null || raw.isBlank()) {
            return defaultValue;
        }
        try {
            long v = Long.parseLong(raw.trim());
            if (v < 0) {
                throw Settings.invalid(key, raw, "an integer >= 0");
            }
            return v;
        } catch (NumberFormatException e) {
            throw Settings.invalid(key, raw, "an integer >= 0");
        }
    }

    private static String botId(String rest, String suffix) {
        String bot = rest.substring(0, rest.length() - suffix.length());
        if (!BudgetKeys.BOT_ID.matcher(bot).matches()) {
            throw Settings.invalid("bot." + rest, bot, "a bot id matching " + BudgetKeys.BOT_ID.pattern());
        }
        return bot;
    }

    private static double fraction(Settings s, String key, double defaultValue) {
        String raw = s.string(key, null);
        if (raw == null || raw.isBlank()) {
            return defaultValue;
        }
        try {
            double v = Double.parseDouble(raw.trim());
            if (!(v >= 0 && v <= 1)) {
                throw Settings.invalid(key, raw, "a number between 0 and 1");
            }
            return v;
        } catch (NumberFormatException e) {
            throw Settings.invalid(key, raw, "a number between 0 and 1");
        }
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
                .aimd(aimdDecreaseFactor, aimdIncreasePerS, aimdFloor).outageMode(outageMode).maxReplicas(maxReplicas)
                .probeInterval(probeInterval).circuitMinimumCalls(circuitMinimumCalls).reservationMax(reservationMax)
                .reservationLateMax(reservationLateMax).arrivalGuardLimitPerS(arrivalGuardLimitPerS);
    }

    /**
     * The limits of one bot: the defaults with its global rate replaced by {@code bot.<id>.rate.per.s}, or by
     * the paid-broadcast rate when {@code bot.<id>.paid.broadcast=true}; limits set whole for that id (an HTTP
     * provider's {@code provider.<id>.rate.per.s} and {@code .burst}) win over both.
     */
    public BudgetLimits limitsFor(String botId) {
        BudgetLimits own = botLimits.get(botId);
        if (own != null) {
            return own;
        }
        if (paidBroadcastBots.contains(botId)) {
            return defaults.withGlobalRate(paidRatePerS);
        }
        Double r = botRates.get(botId);
        return r == null ? defaults : defaults.withGlobalRate(r);
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
     * The arrival guard's slack for {@code botId}: how much later than its slot a call may be answered before it is
     * reported ({@link BudgetPort#reportLateAnswer}). Any N + 1 consecutive grants of a GCRA at rate r with burst b
     * span at least (N + 1 &minus; b) &times; 1000/r ms, so a call that arrived at most that minus 1000 ms after its
     * slot cannot share a second with the N grants after it. Never negative (a rate at or above N: every answer
     * later than its slot is reported).
     */
    public Duration arrivalSlack(String botId) {
        BudgetLimits l = limitsFor(botId);
        double spanMs = (arrivalGuardLimitPerS + 1 - l.globalBurst()) * 1000.0 / l.globalRatePerS();
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
        BudgetLimits d = defaults;
        b.defaults = new BudgetLimits(d.globalRatePerS() / maxReplicas, Math.max(1, d.globalBurst() / maxReplicas),
                d.chatRatePerS(), d.chatBurst(), d.groupRatePerMin(), d.groupBurst());
        botRates.forEach((bot, r) -> b.botRate(bot, r / maxReplicas));
        b.botLimits.clear();
        botLimits.forEach((bot, l) -> b.botLimits(bot, new BudgetLimits(l.globalRatePerS() / maxReplicas,
                Math.max(1, l.globalBurst() / maxReplicas), l.chatRatePerS(), l.chatBurst(), l.groupRatePerMin(),
                l.groupBurst())));
        paidBroadcastBots.forEach(bot -> b.botRate(bot, paidRatePerS / maxReplicas));
        return b.build();
    }

    @Override
    public String toString() {
        return "BudgetConfig{" + defaults + ", botRates=" + botRates + (botLimits.isEmpty() ? "" : ", botLimits="
                + botLimits) + ", paidBroadcast=" + paidBroadcastBots
                + ", headroom=" + backfillHeadroom + ", aimd=" + aimdDecreaseFactor + "/" + aimdIncreasePerS + "/"
                + aimdFloor + ", outage=" + outageMode + ", maxReplicas=" + maxReplicas + ", probe="
                + probeInterval.toMillis() + "ms" + (arrivalGuardLimitPerS > 0 ? ", arrivalGuard=" + arrivalGuardLimitPerS
                + "/s" : "") + "}";
    }

    /** Builder for tests and tools; {@link #build()} validates like {@link #from(Settings)}. */
    public static final class Builder {
        private BudgetLimits defaults;
        private final Map<String, Double> botRates = new TreeMap<>();
        private final Map<String, BudgetLimits> botLimits = new TreeMap<>();
        private final Set<String> paidBroadcastBots = new TreeSet<>();
        private double paidRatePerS = TELEGRAM_PAID_BROADCAST_RATE_PER_S;
        private double backfillHeadroom = 0.2;
        private double aimdDecreaseFactor = 0.5;
        private double aimdIncreasePerS = 0.05;
        private double aimdFloor = 0.1;
        private OutageMode outageMode = OutageMode.LOCAL_FALLBACK;
        private int maxReplicas = 3;
        private Duration probeInterval = Duration.ofSeconds(1);
        private Duration reservationMax = Duration.ZERO;
        private Duration reservationLateMax;
        private int arrivalGuardLimitPerS;
        private int circuitMinimumCalls = 3;

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
