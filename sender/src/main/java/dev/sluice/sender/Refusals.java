package dev.sluice.sender;

import dev.sluice.avro.Lane;
import dev.sluice.metrics.SenderMetrics;
import dev.sluice.sender.budget.BudgetUnavailableException;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.Limit;
import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a lane does when the budget refuses its head: the refusal counted by limit, the instant the lane asks
 * again, and the bot's attempt schedule moved so that waiting lanes come back one slot at a time. A gate (a 429
 * penalty written by any replica) counts as a provider-forced wait; a GLOBAL or HEADROOM refusal of a one-bot
 * message moves the lane's pacer to when the budget admits again and reserves the next free slot.
 *
 * <p>Thread-safe: no state of its own; the pacer is thread-safe, and the {@link PendingMessage} it changes is owned
 * by the thread holding that lane's head. The random source is shared and must be thread-safe.
 */
final class Refusals {
    private static final Logger log = LoggerFactory.getLogger(Refusals.class);
    /** When the budget store is unreachable (and the budget throws) the lane waits this long and asks again. */
    static final Duration BUDGET_UNAVAILABLE_WAIT = Duration.ofSeconds(1);

    private final LanePacer pacer;
    private final DeliveryPolicy policy;
    private final SenderMetrics metrics;
    private final RandomGenerator random;

    Refusals(LanePacer pacer, DeliveryPolicy policy, SenderMetrics metrics, RandomGenerator random) {
        this.pacer = Objects.requireNonNull(pacer);
        this.policy = Objects.requireNonNull(policy);
        this.metrics = Objects.requireNonNull(metrics);
        this.random = Objects.requireNonNull(random);
    }

    /**
     * A refusal of {@code bot} for {@code p}: when the lane asks again (epoch ms). A GATE_BOT refusal (another
     * replica saw the bot's penalty) and a GLOBAL refusal of a one-bot message move the bot's pacer.
     *
     * @param single whether the message has only this bot to try (a one-bot message, or a pool with one active bot)
     */
    long refused(PendingMessage p, String bot, Decision decision, long now, boolean single) {
        String limit = switch (decision.limit()) {
            case GLOBAL, HEADROOM -> "global";
            case CHAT -> "chat";
            case GROUP -> "group";
            case GATE_CHAT, GATE_GROUP, GATE_BOT -> "gate";
            case QUOTA -> "quota";
            default -> null;
        };
        if (limit != null) {
            metrics.budgetRefused(bot, limit);
        }
        long waitMs = decision.retryIn().toMillis();
        if (decision.limit().isGate()) {
            p.recordReschedule();
            p.releaseAttemptSlot();
            if (decision.limit() == Limit.GATE_BOT) {
                pacer.deferBoth(bot, now + waitMs); // another replica saw the bot's penalty
            }
            return now + waitMs + policy.jitterMs(random);
        }
        if (pacer.asksAhead(p) && decision.limit() == Limit.GLOBAL) {
            return now + waitMs; // asks again exactly when the budget admits: no pacer slot, no batch alignment
        }
        if (single && (decision.limit() == Limit.GLOBAL || decision.limit() == Limit.HEADROOM)) {
            // HEADROOM is the backfill share of the global limit: paced the same way, so a refused backfill
            // backlog does not come back all at once (one budget call per waiting lane per slot).
            if (pacer.laneOf(p) != Lane.BACKFILL && decision.limit() == Limit.GLOBAL && !p.keptTurn()
                    && waitMs < pacer.intervalMillis(bot, p)) {
                p.keptTurn(true); // once per slot: under contention from other replicas it takes the next slot
                // A live lane early by less than one slot (the slot was rounded to whole ms, the clocks of this
                // host and Redis differ, or backfill took the slot): keep its turn and ask again exactly then; the
                // budget lets a waiting live caller pass before backfill. A refused backfill lane always goes to
                // the back of the backfill schedule: a backlog must never turn into a storm of budget calls.
                p.holdAttemptSlot();
                return now + waitMs;
            }
            // Another replica took the slot: no slot of this instance before the budget admits again, and this
            // lane reserves the next free one. Lanes never pile up retrying. With reservations the slots within the
            // horizon are taken already: ask again as soon as the horizon has room, not only when the bot is free.
            boolean reserving = policy.reserves() && pacer.laneOf(p) != Lane.BACKFILL
                    && decision.limit() == Limit.GLOBAL;
            pacer.deferTo(bot, p, reserving
                    ? DeliveryPolicy.reservingAskAgainAtMs(now, waitMs,
                            pacer.horizon(bot, p).toMillis())
                    : now + waitMs);
            p.holdAttemptSlot();
            p.keptTurn(false);
            p.waitsForTurnOnly(true); // a global refusal: an urgent message behind may ask again before the turn
            return pacer.reserve(bot, p, now);
        }
        return now + waitMs;
    }

    /**
     * The budget could not decide for {@code chats} lanes of {@code bot} ({@link BudgetUnavailableException}, or
     * anything else it threw): counted, logged, and the instant they ask again.
     */
    long unavailable(String bot, RuntimeException e, int chats, long now) {
        if (e instanceof BudgetUnavailableException) {
            metrics.redisError("connection");
        }
        log.warn("budget unavailable for bot {} ({}); {} chats wait {} ms", bot, e.toString(), chats,
                BUDGET_UNAVAILABLE_WAIT.toMillis());
        return now + BUDGET_UNAVAILABLE_WAIT.toMillis();
    }
}
