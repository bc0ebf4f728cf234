package dev.sluice.sender.budget;

import dev.sluice.metrics.BudgetState;
import dev.sluice.sender.redis.RedisEndpoint;
import dev.sluice.sender.redis.RedisSession;
import io.lettuce.core.RedisException;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.resource.ClientResources;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shared budget in Redis: every decision (one message or a batch of one bot's messages) is one call of
 * {@code budget.lua} by EVALSHA (on NOSCRIPT the script is loaded again and the call repeated), which
 * checks atomically, on Redis server time, the penalty gates (bot, group, chat), the bot's global GCRA at
 * its AIMD-adjusted rate, each chat's GCRA and each group's GCRA.
 *
 * <p><b>Backfill headroom</b> (h = {@code budget.backfill.headroom}, global rate r, burst b, effective
 * interval I): a backfill message passes only if (a) the global GCRA would pass it with R = ⌈h·b·I⌉ taken off
 * its tolerance ({@code t ≥ TAT − (b−1)·I + R}), so a live caller that waits its returned wait always comes
 * before a waiting backfill caller, and (b) the backfill lane's own GCRA at rate (1−h)·r with burst
 * max(1, ⌊(1−h)·b⌋) passes, so backfill alone never takes more than (1−h)·r and h·r stays free for live.
 * A backfill refusal caused only by (a) or (b) reports {@link Limit#HEADROOM}.
 *
 * <p><b>AIMD</b>: {@link #penalize} with scope BOT multiplies the bot's rate by
 * {@code budget.aimd.decrease.factor} (at most once per penalty episode, down to {@code budget.aimd.floor});
 * from the moment the gate lifts, the multiplier climbs back by {@code budget.aimd.increase.per.s} of the
 * configured rate per second, computed lazily in the script from the stored (multiplier, instant).
 *
 * <p><b>Sent marks</b> (issue 19): pending mark writes ({@link #foldMarkWrites}) ride on the calls, and a grant
 * writes the in-flight mark a request carries ({@link BudgetRequest#inFlight()}) in the same call.
 * <b>In the same round trip</b>: a request naming its message ({@link BudgetRequest#sentMarkId()}) has the
 * message's sent mark ({@code sluice:{bot}:sent:<id>}, written by {@code RedisSentMarks}) read by the script; a
 * marked message is answered {@link Limit#ALREADY_SENT} and consumes nothing. A live request with
 * {@link BudgetRequest#reserveUpTo()} refused only by the global limit within that horizon is granted for the
 * next free slot instead ({@link Decision#isReservation()}). Keys are packed strings (see {@link BudgetKeys}): a
 * refusal costs TIME and one GET per key, and writes nothing.
 *
 * <p>One Lettuce connection per instance, to a server, a Sentinel set or a Redis Cluster ({@link RedisEndpoint}:
 * on a cluster each call goes to the primary of its bot's slot); Lettuce connections are thread-safe and pipeline
 * concurrent callers. Commands fail fast while disconnected (no buffering) and time out after the command timeout (the
 * synchronous API waits at most that long; no per-command timer task is scheduled). The client never reads its
 * own clock for a decision.
 *
 * <p>Loading the script, EVALSHA and the reload on NOSCRIPT are {@link BudgetScript}'s job.
 *
 * <p><b>Cost of a decision</b>: one EVALSHA whose keys and arguments are byte arrays, encoded once per bot or taken
 * from constants, so a call builds only the chat keys ({@link AcquireCall}); the reply is one integer per candidate
 * ({@code wait_ms * 16 + code}, or the sent mark), read by {@link BudgetReply}.
 *
 * <p><b>Arrival guard</b> ({@code budget.arrival.guard.limit.per.s} = N &gt; 0): the script numbers the bot's grants
 * ({@link Decision#grantSeq()}, in {@code sluice:{bot}:arrivals}) and {@link #reportLateAnswer} records a floor
 * for the N-th grant after a late-answered one, on Redis server time (see {@code budget.lua}, op 'late').
 */
public final class RedisGcraBudget implements BudgetPort {
    private static final Logger log = LoggerFactory.getLogger(RedisGcraBudget.class);
    /** The provider's window the arrival guard protects: Telegram counts a bot's messages per second. */
    static final long GUARD_WINDOW_MICROS = 1_000_000;
    /**
     * How far back a bot-wide penalty looks for a chat's 429 whose end it takes (see {@code budget.lua},
     * 'penalize'): Telegram's window, and the sender's default {@code sender.bot.penalty.window.ms}.
     */
    static final Duration RECENT_429_LOOKBACK = Duration.ofSeconds(1);

    private final ClientResources resources;
    private final RedisSession<byte[], byte[]> session;
    private final BudgetConfig config;
    private final BudgetScript script;
    /** Per bot: its keys' prefixes and the acquire arguments before the per-candidate flags, encoded once. */
    private final Map<String, BotArgs> bots = new ConcurrentHashMap<>();
    private final String redisUrl;
    private final FailoverGuard guard;
    /** Set once at wiring (volatile): the sent-mark writes waiting for a budget call of their bot; null: none. */
    private volatile MarkWrites markWrites;

    /**
     * @param redisUrl       e.g. {@code redis://localhost:6379}
     * @param limits         the GCRA parameters applied to every bot (other settings at their defaults)
     * @param commandTimeout bound on each Redis command
     * @throws BudgetUnavailableException if Redis cannot be reached
     */
    public RedisGcraBudget(String redisUrl, BudgetLimits limits, Duration commandTimeout) {
        this(redisUrl, BudgetConfig.of(limits), commandTimeout);
    }

    /**
     * @param redisUrl       e.g. {@code redis://localhost:6379}
     * @param config         limits per bot, headroom, AIMD
     * @param commandTimeout bound on each Redis command (and on connecting)
     * @throws BudgetUnavailableException if Redis cannot be reached
     */
    public RedisGcraBudget(String redisUrl, BudgetConfig config, Duration commandTimeout) {
        this(redisUrl, config, commandTimeout, null);
    }

    /**
     * As {@link #RedisGcraBudget(String, BudgetConfig, Duration)}, with Lettuce's command latencies recorded in
     * {@code registry} (tag {@code client=budget}, see {@link LettuceResources}); null: not recorded.
     */
    public RedisGcraBudget(String redisUrl, BudgetConfig config, Duration commandTimeout,
                           io.micrometer.core.instrument.MeterRegistry registry) {
        this.config = Objects.requireNonNull(config, "config");
        this.redisUrl = Objects.requireNonNull(redisUrl, "redisUrl");
        RedisEndpoint endpoint = RedisEndpoint.parse(redisUrl);
        this.resources = LettuceResources.create(registry, "budget");
        try {
            this.session = RedisSession.connect(endpoint, ByteArrayCodec.INSTANCE, commandTimeout, resources);
        } catch (RedisException e) {
            resources.shutdown(0, 1, TimeUnit.SECONDS);
            throw new BudgetUnavailableException("budget: " + e.getMessage(), e);
        }
        this.script = new BudgetScript(session.sync());
        try {
            this.guard = new FailoverGuard(session, resources, config);
        } catch (BudgetUnavailableException e) {
            session.close();
            resources.shutdown(0, 1, TimeUnit.SECONDS);
            throw e;
        }
        log.info("budget script sha {}, {}", script.sha(), config);
    }

    @Override
    public BudgetState state() {
        return BudgetState.SHARED;
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
        BotArgs bot = bots.computeIfAbsent(botId, id -> AcquireCall.botArgs(id, config));
        guard.beforeDecision(botId, bot.botKey, bot.seenEpoch, () -> startDrained(botId));
        MarkWrites pending = markWrites;
        Map<String, List<MarkWrites.Write>> marks = pending == null ? Map.of()
                : pending.drainForCall(botId, MarkWrites.MAX_PER_CALL);
        try {
            return decide(botId, bot, requests, marks, pending);
        } catch (RuntimeException e) {
            if (!marks.isEmpty()) { // (pending::restore would throw on a null buffer)
                marks.forEach(pending::restore); // not written: the next call or the flush carries them
            }
            throw e;
        }
    }

    private List<Decision> decide(String botId, BotArgs bot, List<BudgetRequest> requests,
                                  Map<String, List<MarkWrites.Write>> marks, MarkWrites pending) {
        AcquireCall acquire = AcquireCall.of(botId, bot, requests, marks, pending, config);
        List<Object> reply = call(acquire.keys, acquire.args);
        bot.routineShort = (Long) reply.get(reply.size() - 1) != 0;
        return BudgetReply.decisions(reply, requests, acquire.guard, pending != null);
    }

    /** The last reply's word for the bot (see {@code budget.lua}, the two horizons); true before its first call. */
    @Override
    public boolean routineHorizonShort(String botId) {
        BotArgs bot = bots.get(botId);
        return bot == null || bot.routineShort;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** {@code budget.aimd.increase.per.s} in ppm of the configured rate per second, as the script's acquire, penalize and seed take it. */
    static long aimdIncreasePpm(BudgetConfig config) {
        return Math.max(1, Math.round(config.aimdIncreasePerS() * 1e6));
    }

    @Override
    public void penalize(String botId, PenaltyScope scope, String chatId, Duration retryAfter) {
        // A gate's PX TTL is bounded whoever asks (issue 16: a retry_after of decades never becomes a gate of decades).
        retryAfter = dev.sluice.sender.telegram.RetryAfterCap.clampPenalty(retryAfter);
        chatId = dev.sluice.chat.ChatIds.normalise(chatId);
        String tag = BudgetKeys.tag(botId);
        PenaltyScope effective = scope == PenaltyScope.GROUP && !BudgetRequest.isGroup(chatId) ? PenaltyScope.CHAT : scope;
        String gate = switch (effective) {
            case BOT -> tag + BudgetKeys.BOT_STATE;
            case GROUP -> tag + BudgetKeys.GROUP + chatId;
            case CHAT -> tag + BudgetKeys.CHAT + chatId;
        };
        // A group's own 429s (20 per minute) can be long and are never a bot-wide penalty in disguise: not remembered.
        byte[][] keys = effective == PenaltyScope.GROUP
                ? new byte[][] {utf8(gate), utf8(tag + BudgetKeys.BOT_STATE)}
                : new byte[][] {utf8(gate), utf8(tag + BudgetKeys.BOT_STATE), utf8(tag + BudgetKeys.RECENT_429)};
        call(keys,
                new byte[][] {ascii("penalize"), ascii(effective == PenaltyScope.BOT ? "bot" : "gate"),
                        ascii(Long.toString(Math.max(1, retryAfter.toMillis()))),
                        ascii(Long.toString(Math.round(config.aimdDecreaseFactor() * 1e6))),
                        ascii(Long.toString(Math.round(config.aimdFloor() * 1e6))), ascii(Long.toString(aimdIncreasePpm(config))),
                        ascii(Long.toString(RECENT_429_LOOKBACK.toMillis()))});
    }

    @Override
    public void reportLateAnswer(String botId, long grantSeq) {
        int n = config.arrivalGuardLimitFor(botId);
        if (n <= 0 || grantSeq < 1) {
            return;
        }
        call(new byte[][] {utf8(BudgetKeys.arrivals(botId))}, new byte[][] {ascii("late"), ascii(Long.toString(grantSeq)),
                ascii(Integer.toString(n)), ascii(Long.toString(GUARD_WINDOW_MICROS))});
    }

    @Override
    public void startDrained(String botId) {
        BudgetLimits l = config.limitsFor(botId);
        // Telegram counts a second; the other replicas leave their fallback within one probe interval after their client
        // reconnected, and a client reconnects within Lettuce's longest reconnect delay: a probe that met the client
        // still disconnected waits one more interval (RedisStallIT in a full verify: one sender resumed 1.56 s after the
        // others, its fallback share next to their full shared rate, 4 x 429; the hold was max(1 s, probe interval))
        long holdMs = Math.max(1000, config.probeInterval().toMillis()) + LettuceResources.MAX_RECONNECT_DELAY.toMillis();
        seedGlobalTat(botId, Duration.ofMillis((l.globalIntervalMicros() * l.globalBurst() + 999) / 1000 + holdMs));
    }

    /**
     * After an outage: the bot's global TAT becomes at least now + {@code busyFor} on Redis server time, so a
     * Redis that came back empty does not hand out a fresh full burst while the replicas' fallback budgets
     * were just spending the rate. Nothing else changes; an existing later TAT is kept.
     *
     * @return how long the bot's global TAT is ahead of now after seeding
     */
    public Duration seedGlobalTat(String botId, Duration busyFor) {
        List<Object> reply = call(new byte[][] {utf8(BudgetKeys.botState(botId))},
                new byte[][] {ascii("seed"), ascii(Long.toString(Math.max(0, busyFor.toMillis()))),
                        ascii(Long.toString(aimdIncreasePpm(config)))});
        return Duration.ofMillis((Long) reply.get(0));
    }

    /** Bots drained because the primary serving them changed (budget.redis.failover.policy=drained-restart). */
    public long failoverDrains() {
        return guard.drains();
    }

    /** EVALSHA/EVAL calls made so far (for the round-trips-per-delivered measurement). */
    @Override
    public long redisRoundTrips() {
        return script.roundTrips();
    }

    /**
     * Pending sent-mark writes ride on the next 'acquire' calls (up to {@link MarkWrites#MAX_PER_CALL} each, the calling
     * bot's own first; on a failed call they go back to the buffer). Which bots' writes may share a call follows this
     * budget's Redis: on one node (standalone, Sentinel) any bot's ({@link MarkWrites#shareAcrossBots}); on a Redis
     * Cluster those whose keys hash to the call's slot ({@link MarkWrites#shareBySlot}; a script's keys share one slot).
     */
    @Override
    public boolean foldMarkWrites(MarkWrites writes) {
        if (session.isCluster()) {
            writes.shareBySlot();
        } else {
            writes.shareAcrossBots();
        }
        this.markWrites = writes;
        return true;
    }

    /** The script takes the bot's next global slot within a request's horizon. */
    @Override
    public boolean reserves() {
        return true;
    }

    /** Sent marks are read by the script from the same Redis ({@code sluice:{bot}:sent:<id>}, the bot's tag). */
    @Override
    public java.util.Optional<String> sentMarksRedisUrl() {
        return java.util.Optional.of(redisUrl);
    }

    /** One PING to every primary (on a Redis Cluster each node serving slots: a bot's node may be the one that is down). */
    @Override
    public void probe() {
        try {
            session.pingPrimaries();
        } catch (io.lettuce.core.RedisException e) {
            throw new BudgetUnavailableException("Redis probe failed: " + e.getMessage(), e);
        }
    }

    private List<Object> call(byte[][] keys, byte[][] args) {
        return script.call(keys, args);
    }

    /** The script text, for tools that want to inspect or benchmark it. */
    public static String loadScript() {
        return BudgetScript.TEXT;
    }

    /** The SHA-1 of {@link #loadScript()}: what EVALSHA names (the sent marks' flush calls the same script). */
    public static String scriptSha1() {
        return BudgetScript.SHA1;
    }

    @Override
    public void close() {
        try {
            guard.close();
            session.close();
        } finally {
            resources.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }
}
