package dev.sluice.sender.budget;

import dev.sluice.avro.Lane;
import dev.sluice.metrics.BudgetState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The shared provider budget of a bot (DESIGN.md, Budget). One decision checks atomically the penalty
 * gates (bot, group, chat), the bot's global GCRA (lowered by AIMD after bot-wide 429s), the chat's GCRA
 * and, for groups, the group's GCRA (Telegram Bot API FAQ: 20 messages per minute per group), and
 * consumes budget from all of them or from none.
 *
 * <p>Implementations: {@link RedisGcraBudget} (shared by every sender replica; the production mode),
 * {@link LocalGcraBudget} (in-process; each process sees only its own traffic) and {@link ResilientBudget}
 * (Redis behind a circuit breaker with a local-fallback or fail-closed outage mode). Decorators extend
 * {@link ForwardingBudget}: {@link LimitKeyBudget} (HTTP providers' limit keys) and {@code QuotaBudget}
 * (PostgreSQL quota). {@code BudgetStack} assembles them. All are thread-safe.
 *
 * <p><b>Capabilities</b>: {@link #reportLateAnswer}, {@link #sentMarksRedisUrl}, {@link #startDrained},
 * {@link #reserves}, {@link #foldMarkWrites} and {@link #redisRoundTrips} have defaults (off) for test doubles only. Every production
 * implementation states each of them, and a decorator forwards them unless its Javadoc says why it cannot
 * (checked by {@code BudgetCapabilitiesTest}): a capability a wrapper drops silently turns reservations, the
 * arrival guard and the folded sent-mark check off for every bot of the process (finding F7).
 */
public interface BudgetPort extends AutoCloseable {

    /**
     * One atomic decision for one message. Lane {@link Lane#BACKFILL} only uses budget above the live
     * headroom.
     *
     * @return granted (budget consumed), or refused with the wait (rounded up to whole ms: waiting exactly
     *     that long passes unless someone else took the budget meanwhile) and the limit that refused
     * @throws BudgetUnavailableException when the budget store cannot be reached (retriable); a
     *     {@link ResilientBudget} never throws it
     */
    Decision tryAcquire(BudgetRequest request);

    /**
     * Up to K candidates of ONE bot in one round trip (one EVALSHA for Redis): each candidate is decided
     * in order, all or nothing (a refused candidate consumes nothing), later candidates see what earlier
     * ones consumed.
     *
     * @param botId    the bot every request must name
     * @param requests the candidates, in priority order
     * @return one decision per request, same order
     * @throws IllegalArgumentException if a request names another bot
     * @throws BudgetUnavailableException when the budget store cannot be reached (retriable)
     */
    default List<Decision> tryAcquireAll(String botId, List<BudgetRequest> requests) {
        List<Decision> out = new ArrayList<>(requests.size());
        for (BudgetRequest r : requests) {
            if (!r.botId().equals(botId)) {
                throw new IllegalArgumentException("request for bot " + r.botId() + " in a batch of bot " + botId);
            }
            out.add(tryAcquire(r));
        }
        return out;
    }

    /**
     * After a 429: a shared penalty gate for its scope (CHAT, GROUP or BOT) lifting after
     * {@code retryAfter}; BOT scope also lowers the bot's effective rate multiplicatively (AIMD; it climbs
     * back additively over time). An existing longer gate is kept.
     *
     * @throws BudgetUnavailableException when the budget store cannot be reached (retriable)
     */
    void penalize(String botId, PenaltyScope scope, String chatId, Duration retryAfter);

    /**
     * The arrival guard ({@link BudgetConfig#arrivalGuardLimitPerS()} = N): the provider's answer to the call of
     * grant {@code grantSeq} came more than the window's slack after the grant's slot, so the call may have reached
     * the provider that late. The bot's N-th grant after it will not come before now + 1 s (the provider's window),
     * so no N + 1 calls can arrive within one second however late this one arrived. A no-op without the guard.
     *
     * @param grantSeq {@link Decision#grantSeq()} of the grant the call used
     * @throws BudgetUnavailableException when the budget store cannot be reached (retriable)
     */
    default void reportLateAnswer(String botId, long grantSeq) {
    }

    /** How this instance decides right now: SHARED, LOCAL, FALLBACK_LOCAL or PAUSED. */
    BudgetState state();

    /**
     * The Redis URL whose sent marks ({@code sluice:{bot}:sent:<message id>}) this budget reads when a request
     * names a message ({@link BudgetRequest#sentMarkId()}), in the same round trip as the decision; empty when
     * it never reads them (then {@link Decision#sentMarkChecked()} is always false).
     */
    default java.util.Optional<String> sentMarksRedisUrl() {
        return java.util.Optional.empty();
    }

    /**
     * After an outage of the shared store: the bot's global bucket starts empty and stays shut for one more
     * provider window (its TAT at least now + burst · interval + max(1 s, the probe interval)), so a store that
     * came back empty does not hand out a fresh burst on top of what the fallback budgets just sent, nor the full
     * rate while other replicas, which resume at their own next probe, still send their fallback share. A no-op
     * for budgets that never lose their state.
     *
     * @throws BudgetUnavailableException when the budget store cannot be reached (retriable)
     */
    default void startDrained(String botId) {
    }

    /**
     * Whether this budget may answer a request with {@link BudgetRequest#reserveUpTo()} by a reservation
     * ({@link Decision#isReservation()}); others refuse such requests as usual.
     */
    default boolean reserves() {
        return false;
    }

    /**
     * Sent-mark writes ({@code sluice:{bot}:sent:<id>}) that may ride on this budget's calls to the same Redis: a
     * budget that can, takes a bot's pending writes into its next decision for that bot (no round trip of their own)
     * and returns true; others return false and the marks are written by the sent marks themselves.
     */
    default boolean foldMarkWrites(MarkWrites writes) {
        return false;
    }

    /**
     * Whether the bot's routine requests are held to the short routine horizon
     * ({@link BudgetConfig#reservationRoutineMax()}) as of this budget's last decision for it: a CRITICAL grant of the
     * bot within {@link BudgetConfig#reservationCriticalMemory()} (on any sender), or a memory of 0. The sender aligns
     * and paces waiting routine lanes to the horizon they get. True for a bot not decided yet, and for a budget
     * without reservations (nothing to hold).
     */
    default boolean routineHorizonShort(String botId) {
        return true;
    }

    /** Redis round trips (script calls) made so far; 0 for a budget without Redis. */
    default long redisRoundTrips() {
        return 0;
    }

    /**
     * Whether the shared store answers, asked without a decision: called on a timer (the sender's status thread, every
     * {@code budget.redis.probe.interval.ms}), so a budget deciding without Redis learns that Redis is back although no
     * message asks it anything (an idle sender reported {@code fallback_local} until its next message, sessions 21-22),
     * and replays what the outage left (drained starts, penalties) then rather than before the next message's decision.
     * {@link ResilientBudget} probes only while it is not {@link dev.sluice.metrics.BudgetState#SHARED} and its breaker lets a call
     * through; {@link RedisGcraBudget} PINGs every primary. A no-op for budgets without a shared store.
     *
     * @throws BudgetUnavailableException when the store cannot be reached (only from a budget without a breaker)
     */
    default void probe() {
    }

    /** A live request for one message. */
    default Decision tryAcquire(String botId, String chatId) {
        return tryAcquire(new BudgetRequest(botId, chatId, Lane.LIVE));
    }

    /** {@link #penalize} with scope CHAT. */
    default void penalizeChat(String botId, String chatId, Duration d) {
        penalize(botId, PenaltyScope.CHAT, chatId, d);
    }

    @Override
    void close();
}
