package dev.sluice.sender;

import static dev.sluice.sender.DeliveryPolicy.retryAt;

import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.metrics.ProviderOutcome;
import dev.sluice.metrics.RateLimitScope;
import dev.sluice.metrics.SenderMetrics;
import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.BudgetUnavailableException;
import dev.sluice.sender.budget.PenaltyScope;
import dev.sluice.sender.provider.SendOutcome;
import dev.sluice.sender.provider.Transport;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The provider call of a message that holds its budget grant, a bot slot and the breaker's permit, and what its
 * {@link SendOutcome} means: 200 → DELIVERED (marked sent); 403 → BLOCKED (chat inactive for that bot); 400 migrate →
 * the lane follows the new id (the result names the old one); 401/404 → the bot's lanes wait for the token re-check
 * ({@link TokenRejections}), never FAILED; other 4xx → FAILED; 429 → attributed, written as a shared gate, the lane waits retry_after
 * plus jitter; 5xx / connect errors → full-jitter backoff, FAILED after {@code sender.max.attempts}; a read timeout
 * after the request was sent → UNCERTAIN unless the class is resent. The bot slot is released as soon as the call
 * returns, and the breaker records every call.
 *
 * <p>A transient failure is also said in the log, bounded per bot ({@link ProviderFaults}): the fault's start, a summary
 * per interval while it lasts, its end, and given-up messages throttled.
 *
 * <p>Thread-safe: no state of its own but the thread-safe {@link ProviderFaults}. It runs on a sending thread
 * ({@code sluice-sender-send-*}), several at once; the {@link PendingMessage} it changes is owned by that thread while
 * it holds the lane's head. The random source is shared and must be thread-safe.
 */
final class ProviderCall {
    private static final Logger log = LoggerFactory.getLogger(ProviderCall.class);
    /** How soon a message held back by a stale {@link PollLease} asks again: the poll loop returns within 100 ms. */
    static final long LEASE_RECHECK_MS = 100;

    private final Transport transport;
    private final BudgetPort budget;
    private final BudgetConfig budgetConfig;
    private final BotSlots slots;
    private final ProviderBreakers breakers;
    private final RateLimitAttribution attribution;
    private final ChatRegistry chats;
    private final TokenRejections tokens;
    private final LanePacer pacer;
    private final Outcomes outcomes;
    private final DeliveryPolicy policy;
    private final SenderMetrics metrics;
    private final Clock clock;
    private final RandomGenerator random;
    /** Set once at wiring, before the sending threads start; null in tests that build no consumer. */
    private volatile PollLease lease;
    private final ThrottledWarning leaseWarning;
    /** What the log says of a bot's failing provider calls and given-up messages; its own per-bot state. */
    private final ProviderFaults faults;

    ProviderCall(Transport transport, BudgetPort budget, BudgetConfig budgetConfig, BotSlots slots,
                 ProviderBreakers breakers, RateLimitAttribution attribution, ChatRegistry chats,
                 TokenRejections tokens, LanePacer pacer,
                 Outcomes outcomes, DeliveryPolicy policy, SenderMetrics metrics, Clock clock,
                 RandomGenerator random) {
        this.transport = Objects.requireNonNull(transport);
        this.budget = Objects.requireNonNull(budget);
        this.budgetConfig = Objects.requireNonNull(budgetConfig);
        this.slots = Objects.requireNonNull(slots);
        this.breakers = Objects.requireNonNull(breakers);
        this.attribution = Objects.requireNonNull(attribution);
        this.chats = Objects.requireNonNull(chats);
        this.tokens = Objects.requireNonNull(tokens);
        this.pacer = Objects.requireNonNull(pacer);
        this.outcomes = Objects.requireNonNull(outcomes);
        this.policy = Objects.requireNonNull(policy);
        this.metrics = Objects.requireNonNull(metrics);
        this.clock = Objects.requireNonNull(clock);
        this.random = Objects.requireNonNull(random);
        this.leaseWarning = new ThrottledWarning(log, 10_000, clock::millis);
        this.faults = new ProviderFaults(log, ProviderFaults.INTERVAL_MS, clock::millis);
    }

    void pollLease(PollLease lease) {
        this.lease = lease;
    }

    /** The provider call with budget, a bot slot and the breaker's permission held; blocks for the call. */
    Step call(PendingMessage p, String bot, String target, Long expiresAt) {
        OutboundMessage m = p.message();
        long start = clock.millis();
        PollLease l = lease;
        if (l != null && !l.held()) {
            // stopped past the lease (PollLease): its partition may be another sender's now, which may have sent this
            slots.release(bot);
            breakers.release(bot);
            leaseWarning.warn("the sender's last poll is older than its partitions' lease (" + l.lease().toMillis()
                    + " ms): provider calls wait for the poll loop (a stop or pause longer than the session timeout?)");
            return retryAt(start + LEASE_RECHECK_MS, expiresAt);
        }
        p.recordCall(start, bot);
        SendOutcome outcome;
        try {
            outcome = transport.send(bot, target, m);
        } catch (RuntimeException e) {
            outcome = new SendOutcome.TransientFailure(null, e.getClass().getSimpleName(), false);
        } finally {
            slots.release(bot);
        }
        boolean keptUncertain = outcome instanceof SendOutcome.TransientFailure t && t.maybeDelivered()
                && policy.keepsUncertain(m.getEventClass());
        // Recorded first: whatever fails after this point writes the result again, never calls the provider again.
        if (outcome instanceof SendOutcome.Delivered d) {
            p.accepted(DeliveryStatus.DELIVERED, d.providerMessageId());
        } else if (keptUncertain) {
            p.accepted(DeliveryStatus.UNCERTAIN, null);
        }
        long after = clock.millis();
        reportIfAnsweredLate(p, bot, after);
        long took = after - start;
        if (outcome instanceof SendOutcome.TransientFailure t) {
            breakers.recordOutage(bot, took, t.description());
            faults.failed(bot, t.errorCode(), t.description(), t.maybeDelivered(), after);
        } else {
            breakers.recordAnswer(bot, took);
            faults.answered(bot, after);
        }
        if (!(outcome instanceof SendOutcome.TokenRejected)) {
            tokens.accepted(bot);
        }
        if (outcome instanceof SendOutcome.Delivered d) {
            metrics.providerResponse(bot, ProviderOutcome.OK);
            chats.markActive(bot, target);
            outcomes.markSent(p, DeliveryStatus.DELIVERED, d.providerMessageId());
            metrics.lag(m.getEventClass(), Duration.ofMillis(p.lastSentAtMs() - m.getDueAt().toEpochMilli()));
            return outcomes.finish(p, DeliveryStatus.DELIVERED, null, null, d.providerMessageId());
        }
        if (outcome instanceof SendOutcome.RetryAfter r) {
            metrics.providerResponse(bot, ProviderOutcome.RATE_LIMITED);
            return onTooManyRequests(p, bot, target, r, after, expiresAt);
        }
        if (outcome instanceof SendOutcome.Blocked b) {
            metrics.providerResponse(bot, ProviderOutcome.FORBIDDEN);
            chats.markInactive(bot, target, after);
            log.info("chat {} is inactive for bot {}: {}", target, bot, b.description());
            return outcomes.finish(p, DeliveryStatus.BLOCKED, b.description(), b.errorCode(), null);
        }
        if (outcome instanceof SendOutcome.ChatMigrated mig) {
            metrics.providerResponse(bot, ProviderOutcome.CLIENT_ERROR);
            String to = Long.toString(mig.newChatId());
            chats.migrate(target, to);
            p.recordReschedule();
            log.info("chat {} migrated to {}: its lane follows", target, to);
            return retryAt(after + 1, expiresAt); // at once, to the new id, still at the head of its lane
        }
        if (outcome instanceof SendOutcome.TokenRejected tr) {
            metrics.providerResponse(bot, ProviderOutcome.CLIENT_ERROR);
            long recheckAt = tokens.reject(bot, tr.errorCode(), tr.description(), after);
            // never FAILED, never a reschedule counted: it waits (or expires at its deadline); a pool's other bots go on
            return retryAt(p.message().getBotPool().size() > 1 ? after + 1 : recheckAt, expiresAt);
        }
        if (outcome instanceof SendOutcome.PermanentFailure f) {
            metrics.providerResponse(bot, ProviderOutcome.CLIENT_ERROR);
            return outcomes.finish(p, DeliveryStatus.FAILED, f.description(), f.errorCode(), null);
        }
        SendOutcome.TransientFailure t = (SendOutcome.TransientFailure) outcome;
        metrics.providerResponse(bot, t.errorCode() != null && t.errorCode() >= 500 ? ProviderOutcome.SERVER_ERROR
                : ProviderOutcome.NETWORK_ERROR);
        if (keptUncertain) {
            // The request reached the provider and no answer came: it may have been delivered. Sending again
            // could duplicate it; this class's policy says not to.
            outcomes.markSent(p, DeliveryStatus.UNCERTAIN, null);
            return outcomes.finish(p, DeliveryStatus.UNCERTAIN, "no answer after the request was sent ("
                    + t.description() + "); may have been delivered, not resent for class " + m.getEventClass(),
                    t.errorCode(), null);
        }
        p.recordTransientFailure();
        p.recordReschedule();
        if (policy.givesUp(p.transientFailures())) {
            String reason = "gave up after " + p.transientFailures() + " failed attempts: " + t.description();
            faults.gaveUp(bot, m.getId(), reason);
            return outcomes.finish(p, DeliveryStatus.FAILED, reason, t.errorCode(), null);
        }
        return retryAt(after + policy.backoffMs(p.transientFailures(), random), expiresAt);
    }

    /**
     * A 429: attribute it (chat, group or the whole bot), write the shared gate for that scope, and park the
     * lane until retry_after plus a one-sided jitter. A bot-wide penalty also defers the bot's pacer, so no
     * lane of this instance calls the bot before the gate lifts and the first call after it is a single probe.
     * A pool message instead moves on to the other bots of its pool at once.
     */
    private Step onTooManyRequests(PendingMessage p, String bot, String target, SendOutcome.RetryAfter r, long after,
                                   Long expiresAt) {
        // Telegram's 429 does not name its scope (inferred); an HTTP provider's 429 or soft limit is bot-wide.
        RateLimitScope scope = r.scope() == SendOutcome.PenaltyScope.BOT
                ? attribution.botWide(bot, r.retryAfter(), after)
                : attribution.attribute(bot, target, r.retryAfter(), after);
        metrics.rateLimited(bot, scope);
        PenaltyScope penalty = switch (scope) {
            case GLOBAL -> PenaltyScope.BOT;
            case GROUP -> PenaltyScope.GROUP;
            case CHAT -> PenaltyScope.CHAT;
        };
        long gateUntil = after + r.retryAfter().toMillis();
        try {
            budget.penalize(bot, penalty, target, r.retryAfter());
        } catch (BudgetUnavailableException e) {
            metrics.redisError("connection");
            log.warn("could not write the penalty gate for bot {}: {}", bot, e.getMessage());
        }
        if (scope == RateLimitScope.GLOBAL) {
            gateUntil = Math.max(gateUntil, attribution.botGateUntilMs(bot));
            pacer.deferBoth(bot, gateUntil);
        }
        p.recordReschedule();
        log.info("429 for bot {} chat {}: retry after {} ms, attributed to {} ({})", bot, target,
                r.retryAfter().toMillis(), scope, r.description());
        if (p.message().getBotPool().size() > 1) {
            return retryAt(after + 1, expiresAt); // the gate now refuses this bot: the others take the message
        }
        return retryAt(gateUntil + policy.jitterMs(random), expiresAt);
    }

    /**
     * The arrival guard ({@code budget.arrival.guard.limit.per.s}): an answer later after the grant's slot than the
     * window's slack means the call may have reached the provider that late, so the budget is told to hold back the
     * grant that could share a second with it. A failed report is only counted: the guard weakens for one window.
     */
    private void reportIfAnsweredLate(PendingMessage p, String bot, long answeredAtMs) {
        try {
            reportLate(p, bot, answeredAtMs);
        } catch (RuntimeException e) {
            // after a provider call: never let the guard's report keep the breaker's permit or redo the call
            log.warn("could not report a late answer of bot {}: {}", bot, e.toString());
        }
    }

    private void reportLate(PendingMessage p, String bot, long answeredAtMs) {
        long seq = p.guardGrantSeq();
        if (seq < 1) {
            return;
        }
        long lateMs = answeredAtMs - p.guardSlotAtMs();
        p.guardedGrant(-1, 0);
        if (Duration.ofMillis(lateMs).compareTo(budgetConfig.arrivalSlack(bot)) <= 0) {
            return;
        }
        metrics.lateAnswer(bot);
        try {
            budget.reportLateAnswer(bot, seq);
        } catch (BudgetUnavailableException e) {
            metrics.redisError("connection");
        }
    }
}
