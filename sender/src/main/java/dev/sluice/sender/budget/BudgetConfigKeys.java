package dev.sluice.sender.budget;

import dev.sluice.config.ConfigFamily;
import dev.sluice.config.ConfigKey;
import dev.sluice.config.ConfigKeySet;
import java.time.Duration;
import java.util.List;

/**
 * The keys of {@link BudgetConfig}, each defined once: name, default, rule and doc. {@link BudgetConfig#from}
 * reads through them and its builder checks values with the same rules. Constants only.
 */
public final class BudgetConfigKeys {
    private static final BudgetLimits TELEGRAM = BudgetLimits.telegramDefaults();
    public static final ConfigKey<Double> GLOBAL_RATE = ConfigKey.positiveNumber("budget.global.rate.per.s",
            TELEGRAM.globalRatePerS(), "a bot's global rate (Telegram FAQ: about 30 messages per second per bot)");
    public static final ConfigKey<Long> GLOBAL_BURST = ConfigKey.positiveInt("budget.global.burst",
            TELEGRAM.globalBurst(), "a bot's global burst");
    public static final ConfigKey<Double> CHAT_RATE = ConfigKey.positiveNumber("budget.chat.rate.per.s",
            TELEGRAM.chatRatePerS(), "per chat (Telegram FAQ: about 1 message per second per chat)");
    public static final ConfigKey<Long> CHAT_BURST = ConfigKey.positiveInt("budget.chat.burst", TELEGRAM.chatBurst(),
            "per chat: messages at once after an idle chat; default 2, one below the 3 Telegram tolerates, so arrival "
                    + "jitter never costs a 429");
    public static final ConfigKey<Double> GROUP_RATE = ConfigKey.positiveNumber("budget.group.rate.per.min",
            TELEGRAM.groupRatePerMin(), "per group (Telegram FAQ: 20 messages per minute per group); applies to "
                    + "negative chat ids and @channel names");
    public static final ConfigKey<Long> GROUP_BURST = ConfigKey.positiveInt("budget.group.burst", TELEGRAM.groupBurst(),
            "per group");
    /**
     * Default of {@link #GROUP_ARRIVAL_MARGIN_MS}: one emission interval of Telegram's 20/min, 5% of a saturated group's
     * throughput (19.05/min, the headroom GroupLimitIT always gave itself). Sized to the jitter measured: 500 ms still
     * cost RichGroupBudgetIT a 429 (retry_after 1 s, so 0.5 to 1.5 s of jitter) at load 35 on 2 cores.
     */
    public static final long DEFAULT_GROUP_ARRIVAL_MARGIN_MS = 3000;
    public static final ConfigKey<Duration> GROUP_ARRIVAL_MARGIN_MS = ConfigKey.millis("budget.group.arrival.margin.ms",
            Duration.ofMillis(DEFAULT_GROUP_ARRIVAL_MARGIN_MS), d -> !d.isNegative() && d.toMillis() <= 60_000,
            "0 <= ms <= 60000",
            "arrival jitter the group limit absorbs: its emission interval is stretched by (60000 + ms) / 60000 (20/min: "
                    + "3000 ms becomes 3150 ms at the default 3000), so any 21 consecutive grants to a group (20/min, burst "
                    + "1) span at least 60 s + ms. Telegram counts a group's calls as they ARRIVE in a sliding minute: "
                    + "without the margin, a call reaching it even 1 ms later after its grant than the call 20 grants "
                    + "after it makes a 21st arrival in one minute and a 429. Cost: ms / 60000 of a saturated group's "
                    + "throughput; 0 = grant at exactly the configured rate");
    /**
     * Default of {@link #GLOBAL_ARRIVAL_MARGIN_MS}: 5% of a saturated bot's rate (30/s becomes 28.57/s), as the group's
     * margin. Sized on many-bots and utilisation runs (BENCHMARKS.md, session 12): at exactly the provider's 30/s a bot's
     * sends reach FakeTelegram up to ~70 ms closer together than their slots when the host is loaded.
     */
    public static final long DEFAULT_GLOBAL_ARRIVAL_MARGIN_MS = 50;
    public static final ConfigKey<Duration> GLOBAL_ARRIVAL_MARGIN_MS = ConfigKey.millis("budget.global.arrival.margin.ms",
            Duration.ofMillis(DEFAULT_GLOBAL_ARRIVAL_MARGIN_MS), d -> !d.isNegative() && d.toMillis() <= 1000,
            "0 <= ms <= 1000",
            "arrival jitter a bot's global limit absorbs: every bot's global emission interval (its rate, per-bot, paid "
                    + "or provider rate included) is stretched by (1000 + ms) / 1000, so any 31 consecutive grants at 30/s "
                    + "span at least 1 s + ms. Telegram counts a bot's calls as they ARRIVE in a sliding second: at exactly "
                    + "its rate a call reaching it later after its grant than the call 30 grants after it (a loaded host, "
                    + "a reserved send up to budget.reservation.late.max.ms late) is a 31st arrival in one second and a "
                    + "429. Cost: ms / (1000 + ms) of a saturated bot's throughput; 0 = grant at exactly the configured "
                    + "rate (with the arrival guard, budget.arrival.guard.limit.per.s, which absorbs late arrivals by itself)");
    public static final String BOT_RATE_SUFFIX = ".rate.per.s";
    public static final String BOT_PAID_SUFFIX = ".paid.broadcast";
    /** Telegram Bot API: with {@code allow_paid_broadcast} up to 1000 messages per second. */
    public static final double TELEGRAM_PAID_BROADCAST_RATE_PER_S = 1000;
    public static final ConfigKey<Double> PAID_RATE = ConfigKey.number("budget.paid.broadcast.rate.per.s",
            TELEGRAM_PAID_BROADCAST_RATE_PER_S, r -> r > 0 && r <= 1_000_000, "0 < r <= 1000000",
            "the global rate of a bot with bot.<id>.paid.broadcast=true (Telegram's paid limit)");
    public static final ConfigKey<Double> BACKFILL_HEADROOM = ConfigKey.number("budget.backfill.headroom", 0.2,
            h -> h >= 0 && h < 1, "0 <= h < 1", "share of the global rate reserved for live traffic; see "
                    + "RedisGcraBudget for the exact rule");
    public static final ConfigKey<Double> AIMD_DECREASE = ConfigKey.number("budget.aimd.decrease.factor", 0.5,
            f -> f > 0 && f <= 1, "0 < f <= 1", "after a bot-wide 429 the rate is multiplied by this");
    public static final ConfigKey<Double> AIMD_INCREASE = ConfigKey.number("budget.aimd.increase.per.s", 0.05,
            x -> x > 0 && x <= 1000, "0 < x <= 1000", "then it climbs back by this share of the configured rate per "
                    + "second (0.05: from half to full in 10 s)");
    public static final ConfigKey<Double> AIMD_FLOOR = ConfigKey.number("budget.aimd.floor", 0.1,
            f -> f >= 0.001 && f <= 1, "0.001 <= floor <= 1", "the lowest multiplier");
    public static final ConfigKey<BudgetConfig.OutageMode> OUTAGE_MODE = ConfigKey.oneOf("budget.redis.outage.mode",
            BudgetConfig.OutageMode.class, BudgetConfig.OutageMode.LOCAL_FALLBACK, "what a sender does while Redis cannot decide: "
                    + "local-fallback = decide in this process at the bot's rate / budget.max.replicas, each bot's first "
                    + "max(1 s, budget.reservation.max.ms) of an outage drained (the provider still counts every replica's "
                    + "shared grants of the last second), each group's first grant one group interval after the last "
                    + "shared send could go out (its sliding minute); fail-closed = send nothing until Redis answers");
    public static final ConfigKey<BudgetConfig.FailoverPolicy> FAILOVER_POLICY = ConfigKey.oneOf(
            "budget.redis.failover.policy", BudgetConfig.FailoverPolicy.class, BudgetConfig.FailoverPolicy.DRAINED_RESTART,
            "what the budget does when the Redis primary serving a bot changed (a Sentinel or Cluster failover, a "
                    + "restarted server): drained-restart = before its next decision there the bot starts drained "
                    + "(nothing for max(1 s, budget.redis.probe.interval.ms) + 1 s plus one burst), so grants the old primary "
                    + "made but did not replicate are not handed out again within the provider's second; none = decide "
                    + "on whatever the new primary has (it may repeat the last grants)");
    public static final ConfigKey<BudgetConfig.EvictionCheck> EVICTION_CHECK = ConfigKey.oneOf(
            "budget.redis.eviction.check", BudgetConfig.EvictionCheck.class, BudgetConfig.EvictionCheck.WARN,
            "at connect, each primary's maxmemory-policy is read (INFO memory); any policy but noeviction may evict "
                    + "budget keys and sent marks (every Sluice key has a TTL, so volatile-* evicts them too): warn = "
                    + "log a warning, refuse = do not decide in that Redis (the outage mode applies), off = do not check");
    public static final ConfigKey<SharedLimitsCheck.Policy> LIMITS_CHECK = ConfigKey.oneOf("budget.limits.check",
            SharedLimitsCheck.Policy.class, SharedLimitsCheck.Policy.WARN,
            "every 30 s each sender publishes, per bot, the limits it decides with (rates, bursts, margins, AIMD, the "
                    + "script's hash) in Redis and compares them with the other live senders': warn = log the keys that "
                    + "differ and count the bots in sluice_budget_limits_disagreeing_bots, refuse = also do not start "
                    + "while a live sender disagrees, off = publish only (the others still compare with it)");
    public static final ConfigKey<Long> MAX_REPLICAS = ConfigKey.integer("budget.max.replicas", 3L,
            n -> n >= 1 && n <= Integer.MAX_VALUE, "an integer >= 1",
            "sender replicas that may fall back at once: in local fallback each decides at global rate / this");
    public static final ConfigKey<Duration> PROBE_INTERVAL_MS = ConfigKey.millis("budget.redis.probe.interval.ms",
            Duration.ofSeconds(1), d -> d.toMillis() > 0, "a positive number of milliseconds",
            "how long the circuit stays open before a half-open probe of Redis; also the wait of a fail-closed refusal");
    public static final ConfigKey<Long> CIRCUIT_MINIMUM_CALLS = ConfigKey.integer("budget.circuit.minimum.calls", 3L,
            n -> n >= 1 && n <= Integer.MAX_VALUE, "an integer >= 1", "failed calls in a row that open the circuit");
    public static final ConfigKey<Duration> RESERVATION_MAX_MS = ConfigKey.millis("budget.reservation.max.ms",
            Duration.ofMillis(500), d -> !d.isNegative() && d.toMillis() <= 60_000, "0 <= ms <= 60000",
            "how far ahead the sender may take the bot's next global slot instead of a refusal (live messages whose "
                    + "chat and group limits pass now; see budget.lua), so replicas asking for the same bot do not "
                    + "collide and waiting lanes are decided in batches (about one Redis round trip per several "
                    + "messages instead of a refused call per message); 0 = never reserve. A reserved send may leave "
                    + "up to budget.reservation.late.max.ms after its slot: budget.global.arrival.margin.ms and the "
                    + "arrival guard (both on by default) keep that from becoming a 31st call in the provider's second");
    public static final ConfigKey<Duration> RESERVATION_ROUTINE_MAX_MS = ConfigKey.millis(
            "budget.reservation.routine.max.ms", Duration.ofMillis(100),
            d -> !d.isNegative() && d.toMillis() <= 60_000, "0 <= ms <= 60000",
            "the reservation horizon of routine lanes (not CRITICAL, not ahead of a CRITICAL message), at most "
                    + "budget.reservation.max.ms: the global slots a bot's routine work may hold ahead are the ones "
                    + "a critical message arriving meanwhile waits behind (at 30/s, 100 ms is 3 slots, 500 ms 15). "
                    + "A shorter horizon costs more budget round trips per routine message; 0 = routine lanes never "
                    + "reserve");
    public static final ConfigKey<Duration> RESERVATION_CRITICAL_MEMORY_MS = ConfigKey.millis(
            "budget.reservation.critical.memory.ms", Duration.ofMinutes(10),
            d -> !d.isNegative() && d.toMillis() <= 604_800_000L, "0 <= ms <= 604800000 (7 days)",
            "how long a CRITICAL grant of a bot (on any sender: the mark is in Redis, sluice:{bot}:critical) holds "
                    + "the bot's routine lanes to budget.reservation.routine.max.ms; a bot with no CRITICAL grant "
                    + "that recent lets routine lanes reserve as far as budget.reservation.max.ms (fewer budget "
                    + "calls per message), and its first CRITICAL message may wait up to that horizon behind them. "
                    + "0 = routine lanes always use budget.reservation.routine.max.ms");
    public static final ConfigKey<Duration> PENALTY_PROBE_WINDOW_MS = ConfigKey.millis(
            "budget.penalty.probe.window.ms", Duration.ofSeconds(1),
            d -> !d.isNegative() && d.toMillis() <= 60_000, "0 <= ms <= 60000",
            "after a bot-wide penalty (429) lifts, one call goes first (the probe, on any sender) and every other "
                    + "call of the bot waits this long after the probe's slot, so the provider's answer to the probe "
                    + "is known before anything else goes: a 429 closes the bot again, and no slot was handed out "
                    + "into the renewed penalty (Telegram extends a penalty on every call made during it). Longer "
                    + "than a provider round trip; 0 = off (every sender's next slots go out as the gate lifts)");
    public static final ConfigKey<Duration> RESERVATION_LATE_MAX_MS = ConfigKey.millis("budget.reservation.late.max.ms",
            null, d -> !d.isNegative() && d.toMillis() <= 60_000, "0 <= ms <= 60000",
            "how late after its reserved slot a send may still go out; later, the slot passes unused and the lane "
                    + "asks again. A provider counting arrivals in a sliding window (Telegram: 30 per second) "
                    + "refuses the 31st call in any second, so a send later than the window's slack, 30 x (1000/rate "
                    + "- 1000/30) ms, costs a bot-wide 429: set about half that slack near the limit. Default: one "
                    + "interval of the bot's rate");
    public static final ConfigKey<Long> ARRIVAL_GUARD_LIMIT = ConfigKey.integer("budget.arrival.guard.limit.per.s", 30L,
            n -> n >= 0 && n <= 1_000_000, "0 (off) <= N <= 1000000",
            "the arrival guard, for a provider that counts calls as they arrive in a sliding second (Telegram: 30 "
                    + "per bot; the default): N, and a call answered later after its slot than the window's "
                    + "slack makes the bot's N-th grant after it wait until one second after the answer "
                    + "(BudgetPort.reportLateAnswer). A bot configured above N (paid broadcast, an HTTP provider, "
                    + "bot.<id>.rate.per.s or budget.global.rate.per.s) is counted against its configured rate. Costs one Redis round trip per late answer. 0 = off");
    /** Every budget key and the per-bot families ({@code bot.<id>.rate.per.s}, {@code bot.<id>.paid.broadcast}). */
    public static final ConfigKeySet ALL = ConfigKeySet.of(List.of(GLOBAL_RATE, GLOBAL_BURST, CHAT_RATE, CHAT_BURST,
            GROUP_RATE, GROUP_BURST, GROUP_ARRIVAL_MARGIN_MS, GLOBAL_ARRIVAL_MARGIN_MS, PAID_RATE, BACKFILL_HEADROOM, AIMD_DECREASE, AIMD_INCREASE, AIMD_FLOOR, OUTAGE_MODE,
            FAILOVER_POLICY, EVICTION_CHECK, LIMITS_CHECK,
            MAX_REPLICAS, PROBE_INTERVAL_MS, CIRCUIT_MINIMUM_CALLS, RESERVATION_MAX_MS, RESERVATION_ROUTINE_MAX_MS,
            RESERVATION_CRITICAL_MEMORY_MS, RESERVATION_LATE_MAX_MS, PENALTY_PROBE_WINDOW_MS,
            ARRIVAL_GUARD_LIMIT), List.of(
            ConfigFamily.perId("bot.", BudgetKeys.BOT_ID.pattern(), BOT_RATE_SUFFIX,
                    "this bot's global rate, overriding budget.global.rate.per.s"),
            ConfigFamily.perId("bot.", BudgetKeys.BOT_ID.pattern(), BOT_PAID_SUFFIX, "true: the bot sends with "
                    + "allow_paid_broadcast; its global rate is budget.paid.broadcast.rate.per.s")));

    private BudgetConfigKeys() {
    }
}
