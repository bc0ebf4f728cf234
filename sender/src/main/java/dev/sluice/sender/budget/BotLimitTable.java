package dev.sluice.sender.budget;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * Per-bot resolution of a {@link BudgetConfig}, walked once at build: for every bot named anywhere, the limits it is
 * granted at and the arrival guard's N for it. Precedence of what a bot is configured with: limits set whole
 * ({@code provider.<id>.rate.per.s}, {@code .burst}) over paid broadcast ({@code bot.<id>.paid.broadcast}) over a
 * per-bot rate ({@code bot.<id>.rate.per.s}) over the defaults. No thread owns it: immutable after construction, read freely.
 */
final class BotLimitTable {
    /**
     * One bot's resolved entry: what the budget grants at (margin applied), what it is configured with, and its configured
     * rate, rounded down.
     */
    private record Entry(BudgetLimits granted, BudgetLimits configured, int configuredLimitPerS) {}

    private final Entry defaults;
    private final Map<String, Entry> byBot = new HashMap<>();
    private final int guardLimitPerS;

    /**
     * @param guardLimitPerS {@code budget.arrival.guard.limit.per.s}; 0 = the guard is off for every bot
     * @param margin         {@code budget.global.arrival.margin.ms}: each granted global interval is stretched by it
     */
    BotLimitTable(BudgetLimits defaults, Map<String, Double> botRates, Set<String> paidBroadcastBots, double paidRatePerS,
            Map<String, BudgetLimits> botLimits, int guardLimitPerS, Duration margin) {
        this.defaults = entry(defaults, margin);
        // later puts win: the precedence, lowest first
        botRates.forEach((bot, r) -> byBot.put(bot, entry(defaults.withGlobalRate(r), margin)));
        paidBroadcastBots.forEach(bot -> byBot.put(bot, entry(defaults.withGlobalRate(paidRatePerS), margin)));
        botLimits.forEach((bot, l) -> byBot.put(bot, entry(l, margin)));
        this.guardLimitPerS = guardLimitPerS;
    }

    /** A bot configured at {@code configured}: granted at it less the margin; its own N is its configured rate. */
    private static Entry entry(BudgetLimits configured, Duration margin) {
        long ms = margin.toMillis();
        BudgetLimits granted = ms == 0 ? configured
                : configured.withGlobalRate(configured.globalRatePerS() * 1000.0 / (1000.0 + ms));
        return new Entry(granted, configured, (int) Math.min(1_000_000, Math.floor(configured.globalRatePerS())));
    }

    private Entry of(String botId) {
        Entry e = byBot.get(botId);
        return e != null ? e : defaults;
    }

    BudgetLimits limitsFor(String botId) {
        return of(botId).granted();
    }

    BudgetLimits configuredLimitsFor(String botId) {
        return of(botId).configured();
    }

    /**
     * The guard's N: {@code budget.arrival.guard.limit.per.s}, or the bot's configured rate (before the margin, rounded
     * down) when that is higher; 0 = the guard is off. A rate above N says N is not this bot's provider's limit (a
     * paid broadcast bot, an HTTP provider, a bot or a whole deployment configured for another provider): counted
     * against N, such a bot's slack is 0 and it met a floor at every N-th grant after any late answer, its rate cut
     * to N per second by a guard on by default.
     */
    int arrivalGuardLimitFor(String botId) {
        return guardLimitPerS <= 0 ? 0 : Math.max(guardLimitPerS, of(botId).configuredLimitPerS());
    }

    /** See {@link BudgetConfig#arrivalSlack}. */
    Duration arrivalSlack(String botId) {
        Entry e = of(botId);
        double spanMs = (arrivalGuardLimitFor(botId) + 1 - e.granted().globalBurst()) * 1000.0 / e.granted().globalRatePerS();
        return Duration.ofNanos(Math.max(0, Math.round((spanMs - 1000.0) * 1e6)));
    }
}
