package dev.sluice.sender;

import dev.sluice.sender.budget.BudgetLimits;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * Spaces this instance's budget requests per bot, so lanes waiting on the bot's global limit do not all
 * wake at the same instant and ask the shared budget together (a thundering herd that would cost one
 * Redis call per waiting lane per slot). Each lane reserves an attempt slot; slots follow a GCRA at the
 * bot's global rate and burst (per bot: {@code bot.<id>.rate.per.s}, paid broadcasts). The shared budget
 * still decides every send: the pacer only decides when to ask, never whether to send.
 *
 * <p>After a GLOBAL refusal (another replica took the slot) or a bot-wide penalty, {@link #deferTo} moves
 * the next slot to when the budget admits again. Thread-safe.
 */
final class BotPacer {
    private record Spacing(long intervalMicros, long toleranceMicros) {
    }

    private final Function<String, BudgetLimits> limits;
    private final Map<String, Spacing> spacing = new HashMap<>();
    /** Bot → TAT of the attempt schedule, epoch microseconds. */
    private final Map<String, Long> tats = new HashMap<>();

    BotPacer(Function<String, BudgetLimits> limitsOfBot) {
        this.limits = limitsOfBot;
    }

    BotPacer(BudgetLimits limits) {
        this(bot -> limits);
    }

    private Spacing spacing(String botId) {
        return spacing.computeIfAbsent(botId, b -> {
            BudgetLimits l = limits.apply(b);
            // Slots follow the global rate itself: a lane whose attempt comes a little early (clocks of this
            // host and Redis differ) is refused with a wait of a few ms, keeps its turn and goes first then.
            long interval = Math.max(1, (long) Math.floor(1_000_000d / l.globalRatePerS()));
            return new Spacing(interval, (l.globalBurst() - 1L) * interval);
        });
    }

    /** Reserves the next attempt slot of {@code botId} at or after {@code nowMs}; returns it, epoch ms. */
    synchronized long reserve(String botId, long nowMs) {
        Spacing sp = spacing(botId);
        long now = nowMs * 1000;
        long tat = tats.getOrDefault(botId, now);
        long slot = Math.max(now, tat - sp.toleranceMicros());
        tats.put(botId, Math.max(tat, slot) + sp.intervalMicros());
        if (tats.size() > 10_000) {
            tats.values().removeIf(t -> t <= now); // idle bots: same as absent
        }
        return (slot + 999) / 1000;
    }

    /** The shared budget refused this bot's global limit until {@code untilMs}: no slot before then. */
    synchronized void deferTo(String botId, long untilMs) {
        long floor = untilMs * 1000 + spacing(botId).toleranceMicros();
        tats.merge(botId, floor, Math::max);
    }

    /** The bot's next free attempt slot at or after {@code nowMs} (epoch ms), without reserving it. */
    synchronized long nextFreeAtMs(String botId, long nowMs) {
        long now = nowMs * 1000;
        long slot = Math.max(now, tats.getOrDefault(botId, now) - spacing(botId).toleranceMicros());
        return (slot + 999) / 1000;
    }

    /** The spacing of the bot's attempt slots, whole ms rounded up. */
    synchronized long intervalMillis(String botId) {
        return (spacing(botId).intervalMicros() + 999) / 1000;
    }
}
