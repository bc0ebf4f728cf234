/**
 * The shared provider budget (DESIGN.md, Budget; issue 4).
 *
 * <p>{@link dev.sluice.sender.budget.BudgetPort} is what the sender calls: one atomic decision per message
 * or per batch of one bot's messages, and {@code penalize} after a 429. Behind it:
 * <ul>
 *   <li>{@link dev.sluice.sender.budget.RedisGcraBudget}: {@code budget.lua} by EVALSHA on Redis server
 *       time — penalty gates (bot, group, chat), the global GCRA at its AIMD-adjusted rate, the chat GCRA,
 *       the group GCRA (Telegram Bot API FAQ: 20 messages per minute per group) and the backfill headroom;
 *       all keys of a bot under the hash tag {@code sluice:{bot}:};</li>
 *   <li>{@link dev.sluice.sender.budget.LocalGcraBudget}: the same rules in one process on the GCRA of
 *       module {@code limits};</li>
 *   <li>{@link dev.sluice.sender.budget.ResilientBudget}: Redis behind a circuit breaker, with a
 *       local-fallback or fail-closed outage mode and automatic return to shared mode.</li>
 * </ul>
 * Configuration: {@link dev.sluice.sender.budget.BudgetConfig}.
 */
package dev.sluice.sender.budget;
