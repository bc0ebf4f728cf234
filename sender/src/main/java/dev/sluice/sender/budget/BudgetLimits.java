package dev.sluice.sender.budget;

/**
 * The limits one budget decision enforces for a bot, as GCRA parameters.
 *
 * <p>Defaults follow the Telegram Bot API FAQ: about 30 messages per second per bot overall, about
 * 1 message per second per chat (short bursts tolerated) and at most 20 messages per minute per group. A
 * limit with rate r and burst b admits at most b + r·T messages in any interval of length T; the group
 * limit with burst 1 therefore grants at most 20 in any 60 s window; calls ARRIVE with jitter, so the budget stretches
 * the group interval by {@code budget.group.arrival.margin.ms} ({@link #groupIntervalMicros(long)}).
 *
 * @param globalRatePerS sustained messages per second for the whole bot (all chats), &gt; 0
 * @param globalBurst    messages the bot may send at once after being idle, &ge; 1
 * @param chatRatePerS   sustained messages per second to one chat, &gt; 0
 * @param chatBurst      messages one chat may receive at once after being idle, &ge; 1
 * @param groupRatePerMin sustained messages per minute to one group (negative chat id or {@code @channel}), &gt; 0
 * @param groupBurst     messages one group may receive at once after being idle, &ge; 1
 */
public record BudgetLimits(double globalRatePerS, int globalBurst, double chatRatePerS, int chatBurst,
                           double groupRatePerMin, int groupBurst) {

    /** Telegram Bot API FAQ: 20 messages per minute per group. */
    public static final double TELEGRAM_GROUP_RATE_PER_MIN = 20;

    /** Global and chat limits as given; the group limit at the Telegram default of 20 per minute, burst 1. */
    public BudgetLimits(double globalRatePerS, int globalBurst, double chatRatePerS, int chatBurst) {
        this(globalRatePerS, globalBurst, chatRatePerS, chatBurst, TELEGRAM_GROUP_RATE_PER_MIN, 1);
    }

    public BudgetLimits {
        if (!(groupRatePerMin > 0) || Double.isInfinite(groupRatePerMin) || groupBurst < 1) {
            throw new IllegalArgumentException("group limit must be positive: " + groupRatePerMin + "/min burst "
                    + groupBurst);
        }
        if (!(globalRatePerS > 0) || !(chatRatePerS > 0) || Double.isInfinite(globalRatePerS)
                || Double.isInfinite(chatRatePerS)) {
            throw new IllegalArgumentException("rates must be positive: global=" + globalRatePerS
                    + "/s chat=" + chatRatePerS + "/s");
        }
        if (globalBurst < 1 || chatBurst < 1) {
            throw new IllegalArgumentException("bursts must be >= 1: global=" + globalBurst + " chat=" + chatBurst);
        }
    }

    /** The same limits with another global rate (per-bot rate, paid broadcasts, fallback share). */
    public BudgetLimits withGlobalRate(double ratePerS) {
        return new BudgetLimits(ratePerS, globalBurst, chatRatePerS, chatBurst, groupRatePerMin, groupBurst);
    }

    /** One of {@code n} replicas deciding alone: the global rate / n and burst / n (at least 1), the rest as is. */
    public BudgetLimits replicaShare(int n) {
        return new BudgetLimits(globalRatePerS / n, Math.max(1, globalBurst / n), chatRatePerS, chatBurst, groupRatePerMin,
                groupBurst);
    }

    /**
     * Defaults for Telegram: 30/s burst 1 per bot, 1/s burst 2 per chat, 20/min burst 1 per group. The chat burst is
     * one less than the 3 Telegram tolerates (FakeTelegram's model): a budget that spends the provider's whole burst
     * leaves nothing for arrival jitter (two grants a few ms apart can reach the provider closer together than they
     * were granted), so a default configuration could cost a 429 on its own (issue 16; DefaultChatBurstIT).
     */
    public static BudgetLimits telegramDefaults() {
        return new BudgetLimits(30, 1, 1, 2);
    }

    /**
     * GCRA emission interval of the global limit in microseconds, rounded UP so that rounding can only
     * make the limiter stricter, never admit more than the configured rate.
     */
    public long globalIntervalMicros() {
        return intervalMicros(globalRatePerS);
    }

    /** GCRA emission interval of the per-chat limit in microseconds, rounded up. */
    public long chatIntervalMicros() {
        return intervalMicros(chatRatePerS);
    }

    /** GCRA tolerance τ = (burst − 1)·I of the global limit, microseconds. */
    public long globalToleranceMicros() {
        return (globalBurst - 1L) * globalIntervalMicros();
    }

    /** GCRA tolerance τ = (burst − 1)·I of the per-chat limit, microseconds. */
    public long chatToleranceMicros() {
        return (chatBurst - 1L) * chatIntervalMicros();
    }

    /** GCRA emission interval of the per-group limit in microseconds, rounded up (20/min: 3,000,000). */
    public long groupIntervalMicros() {
        return intervalMicros(groupRatePerMin / 60d);
    }

    /** GCRA tolerance τ = (burst − 1)·I of the per-group limit, microseconds. */
    public long groupToleranceMicros() {
        return (groupBurst - 1L) * groupIntervalMicros();
    }

    /**
     * The group GCRA's emission interval with an arrival margin of {@code marginMs} ({@code
     * budget.group.arrival.margin.ms}): {@link #groupIntervalMicros()} &times; (60000 + marginMs) / 60000, rounded up
     * (exactly {@link #groupIntervalMicros()} for 0; 20/min with the default 3000 ms: 3,150,000).
     *
     * <p>Why: Telegram counts a group's calls as they ARRIVE in a sliding minute, and a GCRA at 20/min with burst 1
     * spaces any 21 consecutive grants exactly 60 s apart, so a call that reaches Telegram even 1 ms later after its
     * grant than the call 20 grants after it is a 21st arrival in one minute: a 429 ({@code ArrivalJitterTest}). With
     * the margin those 21 grants span 60 s + m, so any difference in grant-to-arrival delay up to m is absorbed.
     *
     * <p>Why a margin rather than an arrival guard per group (as the global limit has, {@code budget.lua} op 'late'):
     * at burst 1 the guard's slack is 20 &times; 3 s &minus; 60 s = 0, so it would report every group answer (one more
     * Redis round trip each, and numbered grants per group in both backends), and it only reacts to answers it saw
     * late. The margin needs no state, no round trip and no report, is one parameter of both backends' group GCRA, and
     * costs m / 60 s of a saturated group's throughput (the default 3 s: 5%, 20/min becomes 19.05/min; 500 ms was not
     * enough on a loaded host). Jitter beyond m still risks a 429, which the group's gate then absorbs.
     *
     * <p>The per-chat limit needs no margin: a GCRA stream whose arrivals are delayed by up to d conforms to the same
     * GCRA with d more tolerance, and the default chat burst 2 is one below the 3 Telegram tolerates, so up to one
     * chat interval (1 s) of jitter is absorbed (none if {@code budget.chat.burst} is set to 3).
     */
    public long groupIntervalMicros(long marginMs) {
        if (marginMs < 0) {
            throw new IllegalArgumentException("margin must be >= 0: " + marginMs);
        }
        long base = groupIntervalMicros();
        return Math.addExact(base, -Math.floorDiv(-Math.multiplyExact(base, marginMs), 60_000L));
    }

    static long intervalMicros(double ratePerS) {
        return Math.max(1L, (long) Math.ceil(1_000_000d / ratePerS));
    }
}
