package dev.sluice.sender.budget;

/**
 * The limits one budget decision enforces for a bot, as GCRA parameters.
 *
 * <p>Defaults follow the Telegram Bot API FAQ: about 30 messages per second per bot overall, about
 * 1 message per second per chat (short bursts tolerated) and at most 20 messages per minute per group. A
 * limit with rate r and burst b admits at most b + r·T messages in any interval of length T; the group
 * limit with burst 1 therefore admits at most 20 in any 60 s window.
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

    static long intervalMicros(double ratePerS) {
        return Math.max(1L, (long) Math.ceil(1_000_000d / ratePerS));
    }
}
