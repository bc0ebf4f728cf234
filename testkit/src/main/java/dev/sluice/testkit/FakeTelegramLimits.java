package dev.sluice.testkit;

/**
 * Limits per bot, after the Telegram Bot API FAQ (about 30 messages/s overall, about 1 message/s per
 * chat with short bursts tolerated, at most 20 messages/min per group). Scale them down or up for
 * tests; {@link #telegram()} holds the published numbers. Enforced by {@link TelegramLimiter}, served by {@link FakeTelegram}.
 *
 * @param globalPerSecond accepted messages per bot in any sliding 1 s window, {@code >= 1}
 * @param chatPerSecond sustained rate per chat (GCRA emission interval {@code 1/chatPerSecond} s), {@code > 0}
 * @param chatBurst messages a chat may receive back to back before the rate applies, {@code >= 1}
 * @param groupPerMinute accepted messages per group chat (negative id or {@code @username}) in any
 *     sliding 60 s window, {@code >= 1}
 */
public record FakeTelegramLimits(int globalPerSecond, double chatPerSecond, int chatBurst, int groupPerMinute) {
    public FakeTelegramLimits {
        if (globalPerSecond < 1) {
            throw new IllegalArgumentException("globalPerSecond: must be >= 1, was " + globalPerSecond);
        }
        if (!(chatPerSecond > 0) || Double.isInfinite(chatPerSecond)) {
            throw new IllegalArgumentException("chatPerSecond: must be > 0 and finite, was " + chatPerSecond);
        }
        if (chatBurst < 1) {
            throw new IllegalArgumentException("chatBurst: must be >= 1, was " + chatBurst);
        }
        if (groupPerMinute < 1) {
            throw new IllegalArgumentException("groupPerMinute: must be >= 1, was " + groupPerMinute);
        }
    }

    /** 30/s per bot, 1/s per chat with burst 3, 20/min per group. */
    public static FakeTelegramLimits telegram() {
        return new FakeTelegramLimits(30, 1.0, 3, 20);
    }

    /** Limits so high that nothing is refused (for tests of other behaviour). */
    public static FakeTelegramLimits unlimited() {
        return new FakeTelegramLimits(Integer.MAX_VALUE, 1_000_000.0, Integer.MAX_VALUE, Integer.MAX_VALUE);
    }

    public FakeTelegramLimits withGlobalPerSecond(int value) {
        return new FakeTelegramLimits(value, chatPerSecond, chatBurst, groupPerMinute);
    }

    public FakeTelegramLimits withChatPerSecond(double value) {
        return new FakeTelegramLimits(globalPerSecond, value, chatBurst, groupPerMinute);
    }

    public FakeTelegramLimits withChatBurst(int value) {
        return new FakeTelegramLimits(globalPerSecond, chatPerSecond, value, groupPerMinute);
    }

    public FakeTelegramLimits withGroupPerMinute(int value) {
        return new FakeTelegramLimits(globalPerSecond, chatPerSecond, chatBurst, value);
    }
}
