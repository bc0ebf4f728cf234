package dev.sluice.sender;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.metrics.RateLimitScope;
import dev.sluice.sender.budget.BudgetLimits;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.BudgetUnavailableException;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.Limit;
import dev.sluice.sender.telegram.SendOutcome;
import dev.sluice.sender.telegram.Transport;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One processing step of a lane's head: deadline, budget decision, provider call, classified outcome.
 * Never sleeps: everything that must wait returns {@link Step.RetryAt} and the scheduler parks the lane.
 *
 * <ul>
 * <li>past {@code expires_at} → EXPIRED (a wait that would end after the deadline is cut to it)</li>
 * <li>before asking the budget, a lane reserves an attempt slot from the bot's {@link BotPacer}, so
 *     waiting lanes ask one after another instead of all at once</li>
 * <li>budget refused → retry at now + the returned wait (rounded up by the budget); a GLOBAL refusal
 *     defers the bot's pacer to then and the lane takes the next free slot</li>
 * <li>200 → DELIVERED; 403 → BLOCKED; 400 migrate → FAILED with {@code migrated_to_chat_id}; other 4xx → FAILED</li>
 * <li>429 → a penalty gate for the chat in the budget (every replica sees it) and retry at
 *     now + retry_after + one-sided jitter; 429s do not use up the attempt budget</li>
 * <li>5xx / I/O → exponential backoff with full jitter (base·2^(n−1), capped), FAILED after
 *     {@code sender.max.attempts} such failures</li>
 * </ul>
 */
public final class DeliveryProcessor {
    private static final Logger log = LoggerFactory.getLogger(DeliveryProcessor.class);
    /** When the budget store is unreachable the lane waits this long and asks again (fail-closed). */
    static final Duration BUDGET_UNAVAILABLE_WAIT = Duration.ofSeconds(1);

    private final BudgetPort budget;
    private final Transport transport;
    private final ResultSink results;
    private final Clock clock;
    private final RandomGenerator random;
    private final SenderMetrics metrics;
    private final Set<String> knownBots;
    private final String instanceId;
    private final int maxAttempts;
    private final Duration backoff;
    private final Duration backoffMax;
    private final Duration retryAfterJitter;
    private final BotPacer pacer;
    private final RateLimitAttribution attribution;

    public DeliveryProcessor(BudgetPort budget, Transport transport, ResultSink results, Clock clock,
                             RandomGenerator random, SenderMetrics metrics, Set<String> knownBots, String instanceId,
                             int maxAttempts, Duration backoff, Duration backoffMax, Duration retryAfterJitter,
                             BudgetLimits limits, RateLimitAttribution attribution) {
        this.pacer = new BotPacer(limits);
        this.attribution = Objects.requireNonNull(attribution);
        this.budget = Objects.requireNonNull(budget);
        this.transport = Objects.requireNonNull(transport);
        this.results = Objects.requireNonNull(results);
        this.clock = Objects.requireNonNull(clock);
        this.random = Objects.requireNonNull(random);
        this.metrics = Objects.requireNonNull(metrics);
        this.knownBots = Set.copyOf(knownBots);
        this.instanceId = instanceId;
        this.maxAttempts = maxAttempts;
        this.backoff = backoff;
        this.backoffMax = backoffMax;
        this.retryAfterJitter = retryAfterJitter;
    }

    /** Builds the processor from the config with the system clock. */
    public static DeliveryProcessor of(SenderConfig config, BudgetPort budget, Transport transport, ResultSink results,
                                       SenderMetrics metrics) {
        return new DeliveryProcessor(budget, transport, results, Clock.systemUTC(), RandomGenerator.getDefault(),
                metrics, config.bots().keySet(), config.instanceId(), config.maxAttempts(), config.retryBackoff(),
                config.retryBackoffMax(), config.retryAfterJitter(), config.budgetLimits(),
                new RateLimitAttribution(config.botPenaltyWindow(), config.botPenaltyMinChats()));
    }

    public Step process(PendingMessage p) {
        OutboundMessage m = p.message();
        long now = clock.millis();
        Long expiresAt = m.getExpiresAt() == null ? null : m.getExpiresAt().toEpochMilli();
        if (expiresAt != null && now >= expiresAt) {
            return finish(p, DeliveryStatus.EXPIRED, "deadline expires_at " + m.getExpiresAt() + " passed before sending",
                    null, null, null);
        }
        if (!knownBots.contains(m.getBotId())) {
            return finish(p, DeliveryStatus.FAILED, "no token configured for bot '" + m.getBotId() + "'", null, null,
                    null);
        }
        long botGate = attribution.botGateUntilMs(m.getBotId());
        if (botGate > now) {
            // A bot-wide penalty is running: any call would be refused and extend it. Wait it out, spread by
            // the jitter so the lanes come back one by one through the pacer, not as a burst.
            p.releaseAttemptSlot();
            return retryAt(botGate + jitterMs(), expiresAt);
        }
        if (!p.holdsAttemptSlot()) {
            long slot = pacer.reserve(m.getBotId(), now);
            if (slot > now) {
                p.holdAttemptSlot();
                return retryAt(slot, expiresAt);
            }
        }
        p.releaseAttemptSlot();
        Decision decision;
        try {
            decision = budget.tryAcquire(m.getBotId(), m.getChatId());
        } catch (BudgetUnavailableException e) {
            metrics.budgetError();
            log.warn("budget unavailable for bot {} ({}); chat waits {} ms", m.getBotId(), e.getMessage(),
                    BUDGET_UNAVAILABLE_WAIT.toMillis());
            return retryAt(now + BUDGET_UNAVAILABLE_WAIT.toMillis(), expiresAt);
        }
        if (!decision.granted()) {
            metrics.refused(decision.limit());
            if (decision.limit() == Limit.GLOBAL && decision.retryIn().toMillis() < pacer.intervalMillis()) {
                // Early by less than one slot (the slot was rounded to whole ms, or the clocks of this host and
                // Redis differ): keep this lane's turn and ask again exactly then.
                p.holdAttemptSlot();
                return retryAt(now + decision.retryIn().toMillis(), expiresAt);
            }
            if (decision.limit() == Limit.GLOBAL) {
                // Another replica (or clock skew) took the slot: no slot of this instance before the budget
                // admits again, and this lane reserves the next free one. Lanes never pile up retrying.
                pacer.deferTo(m.getBotId(), now + decision.retryIn().toMillis());
                p.holdAttemptSlot();
                return retryAt(pacer.reserve(m.getBotId(), now), expiresAt);
            }
            return retryAt(now + decision.retryIn().toMillis(), expiresAt);
        }
        p.recordCall(clock.millis());
        metrics.providerCall();
        SendOutcome outcome = transport.send(m.getBotId(), m.getChatId(), m.getText(), m.getParseMode());
        long after = clock.millis();
        if (outcome instanceof SendOutcome.Delivered d) {
            metrics.lag(Duration.ofMillis(p.lastSentAtMs() - m.getDueAt().toEpochMilli()));
            return finish(p, DeliveryStatus.DELIVERED, null, null, d.providerMessageId(), null);
        }
        if (outcome instanceof SendOutcome.RetryAfter r) {
            return onTooManyRequests(p, r, after, expiresAt);
        }
        if (outcome instanceof SendOutcome.Blocked b) {
            return finish(p, DeliveryStatus.BLOCKED, b.description(), b.errorCode(), null, null);
        }
        if (outcome instanceof SendOutcome.ChatMigrated mig) {
            return finish(p, DeliveryStatus.FAILED, mig.description(), 400, null, Long.toString(mig.newChatId()));
        }
        if (outcome instanceof SendOutcome.PermanentFailure f) {
            return finish(p, DeliveryStatus.FAILED, f.description(), f.errorCode(), null, null);
        }
        SendOutcome.TransientFailure t = (SendOutcome.TransientFailure) outcome;
        p.recordTransientFailure();
        if (p.transientFailures() >= maxAttempts) {
            return finish(p, DeliveryStatus.FAILED, "gave up after " + p.transientFailures() + " failed attempts: "
                    + t.description(), t.errorCode(), null, null);
        }
        return retryAt(after + fullJitterBackoffMs(p.transientFailures()), expiresAt);
    }

    /**
     * A 429: attribute it (chat, group or the whole bot), write the shared gate for that scope, and park the
     * lane until retry_after plus a one-sided jitter. A bot-wide penalty also defers the bot's pacer, so no
     * lane of this instance calls the bot before the gate lifts and the first call after it is a single probe.
     */
    private Step onTooManyRequests(PendingMessage p, SendOutcome.RetryAfter r, long after, Long expiresAt) {
        OutboundMessage m = p.message();
        metrics.tooManyRequests();
        RateLimitScope scope = attribution.attribute(m.getBotId(), m.getChatId(), r.retryAfter(), after);
        long gateUntil = after + r.retryAfter().toMillis();
        try {
            budget.penalizeChat(m.getBotId(), m.getChatId(), r.retryAfter());
        } catch (BudgetUnavailableException e) {
            metrics.budgetError();
            log.warn("could not write the penalty gate for bot {}: {}", m.getBotId(), e.getMessage());
        }
        if (scope == RateLimitScope.GLOBAL) {
            pacer.deferTo(m.getBotId(), attribution.botGateUntilMs(m.getBotId()));
            gateUntil = Math.max(gateUntil, attribution.botGateUntilMs(m.getBotId()));
        }
        log.info("429 for bot {} chat {}: retry after {} s, attributed to {}", m.getBotId(), m.getChatId(),
                r.retryAfter().toSeconds(), scope);
        return retryAt(gateUntil + jitterMs(), expiresAt);
    }

    /** One-sided jitter in [0, sender.retry.after.jitter.ms]: never earlier than retry_after. */
    private long jitterMs() {
        return retryAfterJitter.isZero() ? 0 : random.nextLong(retryAfterJitter.toMillis() + 1);
    }

    /** Full jitter: uniform in [0, min(cap, base·2^(n−1))], at least 1 ms. */
    long fullJitterBackoffMs(int failures) {
        long ceiling = backoff.toMillis() << Math.min(30, failures - 1);
        if (ceiling <= 0 || ceiling > backoffMax.toMillis()) {
            ceiling = backoffMax.toMillis();
        }
        return Math.max(1, random.nextLong(ceiling + 1));
    }

    private static Step retryAt(long at, Long expiresAt) {
        // A wait past the deadline ends at the deadline, where the message becomes EXPIRED.
        return new Step.RetryAt(expiresAt == null ? at : Math.min(at, expiresAt));
    }

    private Step finish(PendingMessage p, DeliveryStatus status, String reason, Integer errorCode,
                        Long providerMessageId, String migratedTo) {
        OutboundMessage m = p.message();
        DeliveryResult r = DeliveryResult.newBuilder()
                .setMessageId(m.getId())
                .setBotId(m.getBotId())
                .setChatId(m.getChatId())
                .setStatus(status)
                .setEventClass(m.getEventClass())
                .setLane(m.getLane())
                .setReason(reason)
                .setErrorCode(errorCode)
                .setProviderMessageId(providerMessageId)
                .setAttempts(p.attempts())
                .setDueAt(m.getDueAt())
                .setSentAt(p.lastSentAtMs() < 0 ? null : Instant.ofEpochMilli(p.lastSentAtMs()))
                .setResultAt(Instant.ofEpochMilli(clock.millis()))
                .setDigestCount(m.getDigestCount())
                .setFoldedIds(List.copyOf(m.getFoldedIds()))
                .setMigratedToChatId(migratedTo)
                .setSenderInstance(instanceId)
                .build();
        metrics.result(status);
        results.emit(p, r);
        return Step.DONE;
    }
}
