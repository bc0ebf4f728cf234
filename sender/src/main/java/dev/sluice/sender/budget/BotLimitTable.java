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
    /** One bot's resolved entry: what the budget grants at (margin applied) and its provider's own N (0: the key's). */
    private record Entry(BudgetLimits granted, int providerLimitPerS) {}

    private final Entry defaults;
    private final Map<String, Entry> byBot = new HashMap<>();
    private final int guardLimitPerS;

    /**
     * @param guardLimitPerS {@code budget.arrival.guard.limit.per.s}; 0 = the guard is off for every bot
     * @param margin         {@code budget.global.arrival.margin.ms}: each granted global interval is stretched by it
     */
    BotLimitTable(BudgetLimits defaults, Map<String, Double> botRates, Set<String> paidBroadcastBots, double paidRatePerS,
            Map<String, BudgetLimits> botLimits, int guardLimitPerS, Duration margin) {
        this.defaults = entry(defaults, 0, margin);
        // later puts win: the precedence, lowest first; a provider's own rate (paid broadcast, limits set whole) may
        // raise the guard's N, the operator's rates may not (bot.<id>.rate.per.s above Telegram's 30 is not Telegram's)
        botRates.forEach((bot, r) -> byBot.put(bot, entry(defaults.withGlobalRate(r), 0, margin)));
        paidBroadcastBots.forEach(bot -> byBot.put(bot, entry(defaults.withGlobalRate(paidRatePerS), paidRatePerS, margin)));
        botLimits.forEach((bot, l) -> byBot.put(bot, entry(l, l.globalRatePerS(), margin)));
        this.guardLimitPerS = guardLimitPerS;
    }

    /**
     * @param providerRatePerS the rate the provider itself allows this bot (a paid broadcast bot: Telegram counts it
     *                         against the paid rate; an HTTP provider: its own limit), 0 when it is the guard's N
     */
    private static Entry entry(BudgetLimits configured, double providerRatePerS, Duration margin) {
        long ms = margin.toMillis();
        BudgetLimits granted = ms == 0 ? configured
                : configured.withGlobalRate(configured.globalRatePerS() * 1000.0 / (1000.0 + ms));
        return new Entry(granted, (int) Math.min(1_000_000, Math.floor(providerRatePerS)));
    }

    private Entry of(String botId) {
        Entry e = byBot.get(botId);
        return e != null ? e : defaults;
    }

    BudgetLimits limitsFor(String botId) {
        return of(botId).granted();
    }

    /**
     * The guard's N: {@code budget.arrival.guard.limit.per.s}, or the bot's provider's own rate when that is higher (a
     * paid broadcast bot met a floor at every 30th grant after a late answer when counted against Telegram's 30); 0 =
     * the guard is off.
     */
    int arrivalGuardLimitFor(String botId) {
        return guardLimitPerS <= 0 ? 0 : Math.max(guardLimitPerS, of(botId).providerLimitPerS());
    }

    /** See {@link BudgetConfig#arrivalSlack}. */
    Duration arrivalSlack(String botId) {
        Entry e = of(botId);
        double spanMs = (arrivalGuardLimitFor(botId) + 1 - e.granted().globalBurst()) * 1000.0 / e.granted().globalRatePerS();
        return Duration.ofNanos(Math.max(0, Math.round((spanMs - 1000.0) * 1e6)));
    }
}
