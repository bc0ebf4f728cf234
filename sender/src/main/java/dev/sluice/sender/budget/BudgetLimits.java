package dev.sluice.sender.budget;

/**
 * The limits one budget decision enforces for a bot, as GCRA parameters.
 *
 * <p>Defaults follow the Telegram Bot API FAQ: about 30 messages per second per bot overall and about
 * 1 message per second per chat (short bursts tolerated). A limit with rate r and burst b admits at most
 * b + r·T messages in any interval of length T.
 *
 * @param globalRatePerS sustained messages per second for the whole bot (all chats), &gt; 0
 * @param globalBurst    messages the bot may send at once after being idle, &ge; 1
 * @param chatRatePerS   sustained messages per second to one chat, &gt; 0
 * @param chatBurst      messages one chat may receive at once after being idle, &ge; 1
 */
public record BudgetLimits(double globalRatePerS, int globalBurst, double chatRatePerS, int chatBurst) {

    public BudgetLimits {
        if (!(globalRatePerS > 0) || !(chatRatePerS > 0) || Double.isInfinite(globalRatePerS)
                || Double.isInfinite(chatRatePerS)) {
            throw new IllegalArgumentException("rates must be positive: global=" + globalRatePerS
                    + "/s chat=" + chatRatePerS + "/s");
        }
        if (globalBurst < 1 || chatBurst < 1) {
            throw new IllegalArgumentException("bursts must be >= 1: global=" + globalBurst + " chat=" + chatBurst);
        }
    }

    /** Telegram defaults: 30/s burst 1 per bot, 1/s burst 3 per chat. */
    public static BudgetLimits telegramDefaults() {
        return new BudgetLimits(30, 1, 1, 3);
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

    static long intervalMicros(double ratePerS) {
        return Math.max(1L, (long) Math.ceil(1_000_000d / ratePerS));
    }
}
