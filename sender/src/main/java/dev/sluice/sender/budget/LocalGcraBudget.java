package dev.sluice.sender.budget;

import dev.sluice.avro.Lane;
import dev.sluice.limits.GcraPolicy;
import dev.sluice.limits.Rate;
import dev.sluice.metrics.BudgetState;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The same decision as {@code budget.lua}, inside one process, on the pure-Java GCRA of module
 * {@code limits} ({@link GcraPolicy}, exact integer arithmetic in ms): penalty gates (bot, group, chat), the
 * global GCRA at its AIMD-adjusted rate, the chat GCRA, the group GCRA, the backfill headroom (the rule of
 * {@link RedisGcraBudget}), all or nothing, waits rounded up to whole milliseconds.
 *
 * <p>It only sees this process's traffic: N senders with a local budget each send up to N times the
 * bot's limit. That is the point of the demo's {@code --budget local} mode, and the reason the shared
 * {@link RedisGcraBudget} exists. {@link ResilientBudget} uses it, at rate / {@code budget.max.replicas},
 * while Redis is unreachable.
 *
 * <p><b>Unshared bot penalties</b> (the fallback of N &gt; 1 replicas, while it decides): consecutive bot-wide 429s
 * double the bot gate with jitter ({@link UnsharedBotBackoff}); shared decisions keep one gate and one probe for all.
 */
public final class LocalGcraBudget implements BudgetPort {
    /** Idle entries are swept when the tables grow past this size, so memory stays bounded by activity. */
    private static final int SWEEP_THRESHOLD = 10_000;
    static final long PPM = 1_000_000L;
    /** Rates are kept as count per 10^6 ms: thousandths of a message per second, exact. */
    static final long BASE_PERIOD_MS = 1_000_000L;
    private static final long MAX_PERIOD_MS = 366L * 86_400_000L;

    static final int MAX_DOUBLINGS = UnsharedBotBackoff.MAX_DOUBLINGS;

    private final BudgetConfig config;
    private final Clock clock;
    private final BudgetState state;
    /** Whether bot penalties back off as unshared ones: a fallback of more than one replica. */
    private final boolean unshared;
    private final UnsharedBotBackoff backoff;
    private final Map<String, LocalBot> bots = new HashMap<>();
    /** Key (same names as in Redis) → TAT in its policy's scaled units and the instant the entry is idle. */
    private final Map<String, Entry> tats = new HashMap<>();
    /** Gate key → epoch ms when the gate lifts. */
    private final Map<String, Long> gates = new HashMap<>();
    private int sweepAt = SWEEP_THRESHOLD;
    /**
     * The last instant a shared grant (of any replica) may reach the provider, epoch ms ({@link #sharedSentUntil}), or
     * MIN_VALUE: a group's first grant here comes one group interval after it at the earliest.
     */
    private long sharedSentUntilMs = Long.MIN_VALUE;

    private record Entry(long tat, long idleAtMs) {
    }

    public LocalGcraBudget(BudgetConfig config, Clock clock) {
        this(config, clock, BudgetState.LOCAL);
    }

    /** @param state what {@link #state()} reports: LOCAL, or FALLBACK_LOCAL inside {@link ResilientBudget} */
    LocalGcraBudget(BudgetConfig config, Clock clock, BudgetState state) {
        this(config, clock, state, new java.util.SplittableRandom());
    }

    /** @param jitter the unshared bot gates' jitter (tests pass a seeded one) */
    LocalGcraBudget(BudgetConfig config, Clock clock, BudgetState state, java.util.random.RandomGenerator jitter) {
        this.config = Objects.requireNonNull(config, "config");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.state = Objects.requireNonNull(state, "state");
        this.unshared = state == BudgetState.FALLBACK_LOCAL && config.maxReplicas() > 1;
        this.backoff = new UnsharedBotBackoff(Objects.requireNonNull(jitter, "jitter"));
    }

    public LocalGcraBudget(BudgetLimits limits, Clock clock) {
        this(BudgetConfig.of(limits), clock);
    }

    public LocalGcraBudget(BudgetLimits limits) {
        this(limits, Clock.systemUTC());
    }

    /** A rate per second as an exact {@link Rate} in thousandths, rounded down (never above the configured rate). */
    static Rate rate(double ratePerS) {
        return new Rate(count(ratePerS), BASE_PERIOD_MS);
    }

    static long count(double ratePer) {
        return Math.min(Rate.MAX_COUNT, Math.max(1, (long) Math.floor(ratePer * 1000)));
    }

    static long ceilDiv(long x, long y) {
        return -Math.floorDiv(-x, y);
    }

    @Override
    public BudgetState state() {
        return state;
    }

    private LocalBot bot(String botId) {
        return bots.computeIfAbsent(botId, id -> new LocalBot(config.limitsFor(id), config));
    }

    @Override
    public synchronized Decision tryAcquire(BudgetRequest request) {
        String botId = request.botId();
        String chatId = request.chatId();
        boolean group = request.isGroup();
        boolean backfill = request.lane() == Lane.BACKFILL;
        long now = clock.millis();
        sweepIfLarge(now);
        LocalBot bot = bot(botId);

        // 1. gates: the longest active one refuses
        Limit limit = Limit.NONE;
        long wait = 0;
        long w = gateWait(BudgetKeys.botGate(botId), now);
        if (w > wait) {
            limit = Limit.GATE_BOT;
            wait = w;
        }
        if (group && (w = gateWait(BudgetKeys.groupGate(botId, chatId), now)) > wait) {
            limit = Limit.GATE_GROUP;
            wait = w;
        }
        if ((w = gateWait(BudgetKeys.chatGate(botId, chatId), now)) > wait) {
            limit = Limit.GATE_CHAT;
            wait = w;
        }
        if (limit != Limit.NONE) {
            return Decision.refused(wait, limit);
        }
        // as budget.lua: the first grant in the second after a bot gate lifted is the probe (not after a probe's gate)
        Long botGateEnd = gates.get(BudgetKeys.botGate(botId));
        boolean probe = !config.penaltyProbeWindow().isZero() && botGateEnd != null && botGateEnd <= now
                && now - botGateEnd < RedisGcraBudget.RECENT_429_LOOKBACK.toMillis() && botGateEnd != bot.probeGateEndMs;

        // 2. every GCRA decided before anything is stored: all or nothing
        long m = bot.multiplier(now);
        long period = Math.min(MAX_PERIOD_MS, ceilDiv(BASE_PERIOD_MS * PPM, m));
        GcraPolicy global = new GcraPolicy(new Rate(bot.globalCount, period), bot.limits.globalBurst());
        String chatKey = BudgetKeys.chatTat(botId, chatId);
        String groupKey = BudgetKeys.groupTat(botId, chatId);
        String globalKey = BudgetKeys.globalTat(botId);
        String backfillKey = BudgetKeys.backfillTat(botId);
        GcraPolicy.Result c = bot.chat.decide(tat(chatKey), now);
        GcraPolicy.Result p = group ? bot.group.decide(bot.groupTatAfter(tat(groupKey), sharedSentUntilMs, now), now) : null;
        GcraPolicy.Result g = global.decide(tat(globalKey), now);
        if ((w = waitOf(c)) > wait) {
            limit = Limit.CHAT;
            wait = w;
        }
        if (p != null && (w = waitOf(p)) > wait) {
            limit = Limit.GROUP;
            wait = w;
        }
        if ((w = Math.max(waitOf(g), guardWait(bot, now))) > wait) {
            limit = Limit.GLOBAL;
            wait = w;
        }
        GcraPolicy backfillPolicy = null;
        GcraPolicy.Result bf = null;
        long headroomPpm = config.backfillHeadroomPpm();
        if (backfill && headroomPpm > 0 && g.decision().allowed()) {
            // (a) the live reserve R = ceil(h*b*I) off the global tolerance, (b) the backfill lane's own rate
            long reserveMs = ceilDiv(ceilDiv(headroomPpm * bot.limits.globalBurst() * period, PPM), bot.globalCount);
            long hw = waitOf(global.decide(tat(globalKey), now - reserveMs));
            long bfPeriod = Math.min(MAX_PERIOD_MS, ceilDiv(period * PPM, PPM - headroomPpm));
            long bfBurst = Math.max(1, (long) Math.floor(bot.limits.globalBurst() * (PPM - headroomPpm) / (double) PPM));
            backfillPolicy = new GcraPolicy(new Rate(bot.globalCount, bfPeriod), bfBurst);
            bf = backfillPolicy.decide(tat(backfillKey), now);
            hw = Math.max(hw, waitOf(bf));
            if (hw > wait) {
                limit = Limit.HEADROOM;
                wait = hw;
            }
        }
        if (limit != Limit.NONE) {
            return Decision.refused(wait, limit);
        }
        store(chatKey, c.tat(), bot.chat, now);
        if (p != null) {
            store(groupKey, p.tat(), bot.group, now);
        }
        store(globalKey, g.tat(), global, now);
        if (bf != null) {
            store(backfillKey, bf.tat(), backfillPolicy, now);
        }
        if (probe) {
            // every other call waits for the probe's answer: a 429 moves this gate on (penalize while it is up)
            bot.probeGateEndMs = now + config.penaltyProbeWindow().toMillis();
            gates.put(BudgetKeys.botGate(botId), bot.probeGateEndMs);
        }
        if (config.arrivalGuardLimitPerS() > 0) {
            bot.grantSeq++;
            bot.floors.headMap(bot.grantSeq, true).clear();
            return Decision.grant().withGrantSeq(bot.grantSeq);
        }
        return Decision.grant();
    }

    /** The arrival guard's wait for the bot's next grant: until its floor, if one was recorded. */
    private long guardWait(LocalBot bot, long now) {
        long floor = 0;
        for (long f : bot.floors.headMap(bot.grantSeq + 1, true).values()) {
            floor = Math.max(floor, f);
        }
        return Math.max(0, floor - now);
    }

    /** As {@code budget.lua} op 'late': the N-th grant after {@code grantSeq} not before now + 1 s. */
    @Override
    public synchronized void reportLateAnswer(String botId, long grantSeq) {
        int n = config.arrivalGuardLimitFor(botId);
        if (n <= 0 || grantSeq < 1) {
            return;
        }
        LocalBot bot = bot(botId);
        long at = Math.max(grantSeq + n, bot.grantSeq + 1);
        bot.floors.merge(at, clock.millis() + RedisGcraBudget.GUARD_WINDOW_MICROS / 1000, Math::max);
    }

    /**
     * Tells the fallback that shared grants may reach the provider until {@code untilMs} (Redis's loss + the reservation
     * horizon; {@link ResilientBudget}): the provider counts a group's calls in a sliding minute, shared ones included,
     * so every group's first grant here waits one group interval after that instant (fully drained, as if the shared
     * budget had sent to it then). A later instant replaces an earlier one.
     */
    synchronized void sharedSentUntil(long untilMs) {
        sharedSentUntilMs = Math.max(sharedSentUntilMs, untilMs);
    }

    private static long waitOf(GcraPolicy.Result r) {
        return r.decision().allowed() ? 0 : r.decision().waitMillis();
    }

    private long tat(String key) {
        Entry e = tats.get(key);
        return e == null ? GcraPolicy.EMPTY_TAT : e.tat();
    }

    private void store(String key, long tat, GcraPolicy policy, long now) {
        tats.put(key, new Entry(tat, now + policy.millisUntilIdle(tat, now)));
    }

    private long gateWait(String key, long now) {
        Long until = gates.get(key);
        return until == null ? 0 : Math.max(0, until - now);
    }

    @Override
    public void penalize(String botId, PenaltyScope scope, String chatId, Duration penalty) {
        penalize(botId, scope, chatId, penalty, true);
    }

    /**
     * @param deciding whether this budget decides now: a fallback told of a penalty while Redis decides keeps the gate
     *                 but does not back off (the shared gate and its single probe are at work then)
     */
    synchronized void penalize(String botId, PenaltyScope scope, String chatId, Duration penalty, boolean deciding) {
        long now = clock.millis();
        long until = now + dev.sluice.sender.telegram.RetryAfterCap.clampPenalty(penalty).toMillis();
        chatId = dev.sluice.chat.ChatIds.normalise(chatId);
        PenaltyScope effective = scope == PenaltyScope.GROUP && !BudgetRequest.isGroup(chatId) ? PenaltyScope.CHAT : scope;
        String key = switch (effective) {
            case BOT -> BudgetKeys.botGate(botId);
            case GROUP -> BudgetKeys.groupGate(botId, chatId);
            case CHAT -> BudgetKeys.chatGate(botId, chatId);
        };
        boolean active = gateWait(key, now) > 0;
        LocalBot penalized = bot(botId);
        boolean recent = penalized.recent429EndMs > 0
                && now - penalized.recent429AtMs <= RedisGcraBudget.RECENT_429_LOOKBACK.toMillis();
        if (effective == PenaltyScope.BOT && recent && penalized.recent429EndMs > until
                && penalized.recent429EndMs - until <= RedisGcraBudget.RECENT_429_LOOKBACK.toMillis()) {
            // as budget.lua: a chat's 429 just before may have been this bot-wide penalty, filed for its chat
            until = penalized.recent429EndMs;
        }
        String botGate = BudgetKeys.botGate(botId);
        Long botGateEnd = gates.get(botGate);
        // an unshared episode goes on: this 429 answered the probe (its gate still up) or came just after the gate lifted
        boolean episodeGoesOn = botGateEnd != null && (botGateEnd == penalized.probeGateEndMs && botGateEnd > now
                || botGateEnd <= now && now - botGateEnd <= RedisGcraBudget.RECENT_429_LOOKBACK.toMillis());
        boolean botGateUp = gateWait(botGate, now) > 0;
        // as budget.lua: a chat's 429 within the look-back after the bot's gate lifted is that penalty still running
        boolean justLifted = effective == PenaltyScope.CHAT && botGateEnd != null && botGateEnd <= now
                && now - botGateEnd <= RedisGcraBudget.RECENT_429_LOOKBACK.toMillis();
        if (effective == PenaltyScope.CHAT && gateWait(botGate, now) == 0 && !justLifted
                && !(recent && penalized.recent429EndMs >= until)) {
            penalized.recent429EndMs = until;
            penalized.recent429AtMs = now;
        }
        long lifts = gates.merge(key, until, Math::max);
        if (effective != PenaltyScope.BOT && (gateWait(botGate, now) > 0 || justLifted)) {
            // The bot's gate is up (or just lifted), so this call was made during the bot-wide penalty, and Telegram
            // extends a penalty on every call made during it: the bot's gate moves too (no second AIMD cut).
            long botLifts = gates.merge(botGate, until, Math::max);
            LocalBot bot = bot(botId);
            bot.multiplierPpm = bot.multiplier(now);
            bot.climbFromMs = Math.max(bot.climbFromMs, botLifts);
        }
        if (effective == PenaltyScope.BOT) {
            LocalBot bot = bot(botId);
            long m = bot.multiplier(now);
            if (!active) {
                long floor = Math.round(config.aimdFloor() * PPM);
                m = Math.max(floor, (long) Math.floor(m * config.aimdDecreaseFactor()));
            }
            bot.multiplierPpm = m;
            bot.climbFromMs = lifts;
        }
        if (unshared && deciding && (effective == PenaltyScope.BOT || botGateUp || justLifted)) {
            backOffUnshared(penalized, botGate, now, until - now, episodeGoesOn, botGateUp);
        }
    }

    /** The unshared bot gate ({@link UnsharedBotBackoff}): only a 429 that goes on an episode moves it. */
    private void backOffUnshared(LocalBot bot, String botGate, long now, long retryAfterMs, boolean goesOn, boolean gateUp) {
        bot.unsharedStreak = UnsharedBotBackoff.streakAfter(bot.unsharedStreak, goesOn, gateUp);
        if (!goesOn) {
            return;
        }
        long backoffMs = backoff.gateMs(retryAfterMs, bot.unsharedStreak);
        long end = now + dev.sluice.sender.telegram.RetryAfterCap.clampPenalty(Duration.ofMillis(backoffMs)).toMillis();
        long lifts = gates.merge(botGate, end, Math::max);
        bot.climbFromMs = Math.max(bot.climbFromMs, lifts);
    }

    /** The bot's AIMD rate multiplier now, 1.0 = the configured rate. */
    public synchronized double rateMultiplier(String botId) {
        return bot(botId).multiplier(clock.millis()) / (double) PPM;
    }

    private void sweepIfLarge(long now) {
        if (tats.size() + gates.size() < sweepAt) {
            return;
        }
        // An idle TAT (bucket full again) or a lifted gate is the same as a missing entry.
        tats.values().removeIf(e -> e.idleAtMs() <= now);
        // a lifted bot gate is kept for the look-back: penalize reads when it lifted
        gates.values().removeIf(until -> until + RedisGcraBudget.RECENT_429_LOOKBACK.toMillis() <= now);
        sweepAt = Math.max(SWEEP_THRESHOLD, (tats.size() + gates.size()) * 2);
    }

    /**
     * The fallback's start for a bot when Redis is lost ({@link ResilientBudget}): its global TAT at least
     * max(1 s, {@code budget.reservation.max.ms}) ahead, as a resumed Redis is drained: the provider still counts the
     * shared grants of the last second, and slots the shared budget reserved ahead may still be sent (at the full rate
     * over 3 senders, 6 x 429 in a second at the switch without it; RedisStallIT).
     */
    @Override
    public synchronized void startDrained(String botId) {
        long now = clock.millis();
        long until = now + Math.max(1000, config.reservationMax().toMillis());
        String key = BudgetKeys.globalTat(botId);
        LocalBot bot = bot(botId);
        long seeded = LocalBot.drainedTat(until, bot.globalCount, BASE_PERIOD_MS, bot.limits.globalBurst());
        if (tat(key) < seeded) { // EMPTY_TAT is Long.MIN_VALUE
            tats.put(key, new Entry(seeded, until));
        }
    }

    /** Refuses as usual: a reservation only pays off where replicas share the slots (Redis). */
    @Override
    public boolean reserves() {
        return false;
    }

    /** Nothing to probe: this budget's state is in the process. */
    @Override
    public void probe() {
    }

    /** No sent marks are read here; the sender reads them itself. */
    @Override
    public java.util.Optional<String> sentMarksRedisUrl() {
        return java.util.Optional.empty();
    }

    /** No Redis: no mark rides on a decision. */
    @Override
    public boolean foldMarkWrites(MarkWrites writes) {
        return false;
    }

    /** No Redis. */
    @Override
    public long redisRoundTrips() {
        return 0;
    }

    @Override
    public void close() {
        // nothing to release
    }
}
