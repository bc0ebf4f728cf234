package dev.sluice.sender;

import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.Limit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Per bot, a local "not before" hint: the earliest instant the shared budget can grant the bot's next message, as its
 * last answers to this instance revealed it (issue 19: a budget call that cannot be granted is a Redis round trip that
 * sends nothing). The bot's global GCRA TAT that an answer reveals only moves later as the other replicas spend, so
 * asking before the hint is a refusal for certain; {@link Admission} reschedules such a lane to the hint locally, and
 * the lanes of a bot deferred together become ready at the same instant and are decided by one budget call (a batch).
 *
 * <p>The hint only ever delays a request, never a send past what the budget grants: the budget still decides every
 * message. It is a lower bound of the next grant:
 * <ul>
 * <li>a GLOBAL refusal with wait w (Redis's instant r ≥ {@code askedAt}): the hint is {@code askedAt + w}, the
 *     instant at which a caller that waits exactly the answer's wait passes ({@link Decision}; w is rounded up to whole
 *     ms, so this is at most 1 ms after the GCRA's own instant, as every refused lane's retry); with reservations on, a
 *     live request may take a slot up to the horizon h ahead, so {@code askedAt + max(0, w − h)}
 *     ({@link DeliveryPolicy#reservingAskAgainAtMs}, the rule {@link Refusals} defers the pacer by) (nothing is learned from refusals with the arrival guard on as well: its floors lengthen w beyond what
 *     a reservation waits for)</li>
 * <li>a gate of the whole bot ({@link Limit#GATE_BOT}) forgets the bot's hint: the gate's wait governs then.</li>
 * </ul>
 * A grant teaches nothing here: with a burst above 1 the bot may pass again at once, and a budget keyed by a provider's
 * limit key ({@code LimitKeyBudget}) spaces grants by that key's limits, not the bot's.
 * Bounded: a hint is at most {@link #MAX_HINT_MS} ahead of the answer it came from (a Redis that lost its keys, a
 * failover, grants earlier than a hint can foresee cost at most that wait), and a hint in the past is removed when
 * read. Hints are kept and used only while the budget is SHARED ({@link DeliveryProcessor}): a local fallback decides
 * without round trips. Per-chat hints are not kept: a chat's lane has one head, which already waits its own refusal.
 *
 * <p>Thread-safe (a concurrent map, merged with max): the sending threads learn and read it at once.
 */
final class BusyBots {
    /** The longest a hint reaches beyond the answer it was learned from. */
    static final long MAX_HINT_MS = 1000;

    private final Map<String, Long> notBefore = new ConcurrentHashMap<>();
    private final long reservationMs;
    private final boolean learnsRefusals;

    /**
     * @param config        whether the arrival guard is on
     * @param reservationMs the longest reservation horizon a live request carries (a critical one; 0: none): the hint
     *                      is the earliest any lane of the bot could be granted, a lower bound for routine lanes too
     */
    BusyBots(BudgetConfig config, long reservationMs) {
        this.reservationMs = reservationMs;
        this.learnsRefusals = reservationMs == 0 || config.arrivalGuardLimitPerS() <= 0;
    }

    /** The bot's hint if it is after {@code nowMs}, else 0 (and a past hint is dropped). */
    long notBeforeMs(String bot, long nowMs) {
        Long at = notBefore.get(bot);
        if (at == null) {
            return 0;
        }
        if (at <= nowMs) {
            notBefore.remove(bot, at);
            return 0;
        }
        return at;
    }

    /** The budget's answers to one call for {@code bot}'s requests, made at {@code askedAtMs} (before sending it). */
    void learn(String bot, long askedAtMs, List<Decision> decisions) {
        long hint = 0;
        for (Decision d : decisions) {
            if (d.limit() == Limit.GATE_BOT) {
                forget(bot);
                return;
            }
            if (d.limit() == Limit.GLOBAL && learnsRefusals) {
                long at = DeliveryPolicy.reservingAskAgainAtMs(askedAtMs, d.retryIn().toMillis(), reservationMs);
                hint = Math.max(hint, Math.min(at, askedAtMs + MAX_HINT_MS));
            }
        }
        if (hint > askedAtMs) {
            notBefore.merge(bot, hint, Math::max);
        }
    }

    /** The bot's hint is dropped. */
    void forget(String bot) {
        notBefore.remove(bot);
    }
}
