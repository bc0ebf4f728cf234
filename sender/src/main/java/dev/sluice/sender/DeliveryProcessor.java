package dev.sluice.sender;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
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

    public DeliveryProcessor(BudgetPort budget, Transport transport, ResultSink results, Clock clock,
                             RandomGenerator random, SenderMetrics metrics, Set<String> knownBots, String instanceId,
                             int maxAttempts, Duration backoff, Duration backoffMax, Duration retryAfterJitter,
                             BudgetLimits limits) {
        this.pacer = new BotPacer(limits);
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
                config.retryBackoffMax(), config.retryAfterJitter(), config.budgetLimits());
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
            metrics.tooManyRequests();
            try {
                budget.penalizeChat(m.getBotId(), m.getChatId(), r.retryAfter());
            } catch (BudgetUnavailableException e) {
                metrics.budgetError();
                log.warn("could not write the penalty gate for bot {}: {}", m.getBotId(), e.getMessage());
            }
            long jitter = retryAfterJitter.isZero() ? 0 : random.nextLong(retryAfterJitter.toMillis() + 1);
            log.info("429 for bot {} chat {}: retry after {} s", m.getBotId(), m.getChatId(),
                    r.retryAfter().toSeconds());
            return retryAt(after + r.retryAfter().toMillis() + jitter, expiresAt);
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
