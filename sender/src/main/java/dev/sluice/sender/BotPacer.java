package dev.sluice.sender;

import dev.sluice.sender.budget.BudgetLimits;
import java.util.HashMap;
import java.util.Map;

/**
 * Spaces this instance's budget requests per bot, so lanes waiting on the bot's global limit do not all
 * wake at the same instant and ask the shared budget together (a thundering herd that would cost one
 * Redis call per waiting lane per slot). Each lane reserves an attempt slot; slots follow a GCRA at the
 * bot's global rate and burst. The shared budget still decides every send:
 * the pacer only decides when to ask, never whether to send.
 *
 * <p>After a GLOBAL refusal (another replica took the slot) {@link #deferTo} moves the next slot to when
 * the budget said it admits again. Thread-safe.
 */
final class BotPacer {
    /**
     * Slots follow the global rate itself: a lane whose attempt comes a little early (clocks of this
     * host and Redis differ) is refused with a wait of a few ms, keeps its slot and goes first then.
     */
    static final double HEADROOM = 1.0;

    private final long intervalMicros;
    private final long toleranceMicros;
    /** Bot → TAT of the attempt schedule, epoch microseconds. */
    private final Map<String, Long> tats = new HashMap<>();

    BotPacer(BudgetLimits limits) {
        this.intervalMicros = Math.max(1, (long) Math.floor(1_000_000d / (limits.globalRatePerS() * HEADROOM)));
        this.toleranceMicros = (limits.globalBurst() - 1L) * intervalMicros;
    }

    /** The spacing of attempt slots, whole ms rounded up. */
    long intervalMillis() {
        return (intervalMicros + 999) / 1000;
    }

    /** Reserves the next attempt slot of {@code botId} at or after {@code nowMs}; returns it, epoch ms. */
    synchronized long reserve(String botId, long nowMs) {
        long now = nowMs * 1000;
        long tat = tats.getOrDefault(botId, now);
        long slot = Math.max(now, tat - toleranceMicros);
        tats.put(botId, Math.max(tat, slot) + intervalMicros);
        if (tats.size() > 10_000) {
            tats.values().removeIf(t -> t <= now); // idle bots: same as absent
        }
        return (slot + 999) / 1000;
    }

    /** The shared budget refused this bot's global limit until {@code untilMs}: no slot before then. */
    synchronized void deferTo(String botId, long untilMs) {
        long floor = untilMs * 1000 + toleranceMicros;
        tats.merge(botId, floor, Math::max);
    }
}
