package dev.sluice.sender;

import static dev.sluice.sender.DeliveryPolicy.retryAt;

import dev.sluice.metrics.BudgetState;
import dev.sluice.metrics.SenderMetrics;
import dev.sluice.sender.Admission.Prepared;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.Limit;
import dev.sluice.sender.idempotency.SentMarks;
import dev.sluice.sender.provider.Transport;
import dev.sluice.sender.idempotency.MarkValues;
import dev.sluice.sender.telegram.RetryAfterCap;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One processing step of a lane's head: deadline, idempotency key, bot choice, budget decision, provider
 * call, classified outcome. Never sleeps: everything that must wait returns {@link Step.RetryAt} (or
 * {@link Step.WaitForBot}) and the scheduler parks the lane. It orchestrates; each part has a class of its own:
 *
 * <ul>
 * <li>{@link Admission}: the checks before the budget — past {@code expires_at} or more than
 *     {@code sender.max.reschedules} provider-forced waits → EXPIRED; a chat that blocked the bot (403 seen by this
 *     sender) → SKIPPED_INACTIVE, no call; a group that migrated is sent to its new id; a message already marked
 *     sent in Redis (a redelivery after a crash) → not sent again; at most {@code sender.max.in.flight.per.bot}
 *     calls per bot in flight; a circuit breaker per bot stops calls while 5xx and connect errors dominate</li>
 * <li>{@link LanePacer}: when a lane asks (attempt slots per bot, live and backfill apart; urgent messages first)</li>
 * <li>here: one budget call per batch of one bot's heads, and what each head does with its decision</li>
 * <li>{@link PoolDelivery}: pools ({@code bot_pool}): each bot is tried in turn and the first whose budget grants
 *     sends; when all refuse, the lane waits for the earliest of their waits</li>
 * <li>{@link Refusals}: a refusal → the wait and the pacer's schedule</li>
 * <li>{@link ProviderCall}: the call and its outcome — 200 → DELIVERED; 403 → BLOCKED; 400 migrate → resend to
 *     the new id; other 4xx → FAILED; 429 → attributed ({@link RateLimitAttribution}), a shared gate, the lane
 *     waits retry_after plus jitter (429s do not use up the attempt budget); 5xx / connect errors → full-jitter
 *     backoff, FAILED after {@code sender.max.attempts}; a read timeout after the request was sent → UNCERTAIN,
 *     or resent for classes in {@code sender.resend.uncertain.classes}</li>
 * <li>{@link Outcomes}: the {@code DeliveryResult}; {@link DeliveryPolicy}: the numbers</li>
 * </ul>
 *
 * <p>Thread-safe: no mutable state of its own (the result lookup is set once at wiring). The dispatcher's sending
 * threads ({@code sluice-sender-send-*}) call it at once for different lanes; a {@link PendingMessage} is changed
 * only by the thread that holds its lane's head. A granted call ({@link Next}) may run on another sending thread.
 */
public final class DeliveryProcessor {
    private static final Logger log = LoggerFactory.getLogger(DeliveryProcessor.class);

    private final BudgetPort budget;
    private final Clock clock;
    private final SenderMetrics metrics;
    private final BotSlots slots;
    private final DeliveryPolicy policy;
    private final RandomGenerator random;
    private final ProviderBreakers breakers;
    private final LanePacer pacer;
    private final Outcomes outcomes;
    private final Admission admission;
    private final Refusals refusals;
    private final ProviderCall provider;
    /** Set once at wiring, before the sending threads start ({@link #pollLease}). */
    private volatile PollLease lease;
    private final PoolDelivery pool;
    private final TokenRejections tokens;
    private final BusyBots busy;
    /** Budget calls of {@link #processBatch}, the requests they carried and the grants (reservations included). */
    private final LongAdder batchCalls = new LongAdder();
    private final LongAdder batchRequests = new LongAdder();
    private final LongAdder batchGrants = new LongAdder();

    DeliveryProcessor(SenderConfig config, BudgetPort budget, Transport transport, ResultSink results,
                      SentMarks sentMarks, SenderMetrics metrics, Clock clock, RandomGenerator random, BotSlots slots,
                      ChatRegistry chats) {
        this.budget = Objects.requireNonNull(budget);
        this.clock = Objects.requireNonNull(clock);
        this.metrics = Objects.requireNonNull(metrics);
        this.slots = Objects.requireNonNull(slots);
        this.random = Objects.requireNonNull(random);
        this.policy = DeliveryPolicy.of(config, budget.reserves());
        // The budget reads the sent marks of the same Redis in its decision: no separate GET per message.
        boolean foldSentMarks = budget.sentMarksRedisUrl().isPresent()
                && budget.sentMarksRedisUrl().equals(sentMarks.redisUrl());
        RateLimitAttribution attribution = new RateLimitAttribution(config.botPenaltyWindow(),
                config.botPenaltyMinChats());
        this.breakers = new ProviderBreakers(config.breakerFailureRatePercent(), config.breakerWindowCalls(),
                config.breakerOpen(), config.breakerHalfOpenCalls());
        this.pacer = new LanePacer(config.budgetConfig(), config.topics().outboxBackfill(), policy,
                budget::routineHorizonShort, () -> budget.state() == BudgetState.FALLBACK_LOCAL);
        this.outcomes = new Outcomes(results, sentMarks, chats, metrics, clock, config.instanceId());
        this.tokens = new TokenRejections(config.tokenRecheck());
        // Issue 19: the grant writes the message's in-flight mark when the sent-mark writes ride on the budget's calls
        boolean markInFlight = foldSentMarks && sentMarks.defersWrites();
        this.busy = new BusyBots(config.budgetConfig(), policy.reservationMax().toMillis());
        this.admission = new Admission(config.bots().keySet(), budget, foldSentMarks, markInFlight, chats, tokens,
                attribution, pacer, slots, breakers, outcomes, policy, metrics, random, busy);
        this.refusals = new Refusals(pacer, policy, metrics, random);
        // every provider wait bounded by sender.retry.after.max.ms (issue 16)
        Transport capped = RetryAfterCap.wrap(Objects.requireNonNull(transport), config.retryAfterMax());
        this.provider = new ProviderCall(capped, budget, config.budgetConfig(), slots, breakers, attribution,
                chats, tokens, pacer, outcomes, policy, metrics, clock, random);
        this.pool = new PoolDelivery(budget, admission, pacer, refusals, provider, outcomes, chats, tokens, attribution,
                slots, breakers, policy, metrics, clock, random);
    }

    /**
     * One step of a lane's head. A message of one bot goes through {@link #processBatch} as a batch of one; a
     * pool message asks its bots in turn.
     */
    public Step process(PendingMessage p) {
        if (p.acceptedAs() != null) {
            return outcomes.resultOfAccepted(p);
        }
        if (p.message().getBotPool().isEmpty()) {
            return processBatch(p.message().getBotId(), List.of(p)).get(0).run();
        }
        PollLease l = lease;
        if (l != null && !l.held()) {
            return retryAt(clock.millis() + ProviderCall.LEASE_RECHECK_MS, Admission.expiresAt(p)); // as processBatch
        }
        return pool.process(p);
    }

    /** A message of a batch after the batch's budget decision: its step at once, or a granted provider call. */
    public static final class Next {
        private final Step step;
        private final Supplier<Step> call;

        private Next(Step step, Supplier<Step> call) {
            this.step = step;
            this.call = call;
        }

        static Next of(Step step) {
            return new Next(Objects.requireNonNull(step), null);
        }

        static Next call(Supplier<Step> call) {
            return new Next(null, call);
        }

        /** Whether budget was granted and the provider call is still to be made ({@link #run}, blocking). */
        public boolean isCall() {
            return call != null;
        }

        /** The step: at once, or after making the provider call (blocks for the call's duration). */
        public Step run() {
            return call != null ? call.get() : step;
        }
    }

    /**
     * Decides up to K ready messages of ONE bot (none with a {@code bot_pool}) with one budget call
     * ({@link BudgetPort#tryAcquireAll}: one EVALSHA in Redis). When the budget reads the sent marks of the same
     * Redis, the idempotency check of messages not yet checked rides in that same call, so a delivered message
     * costs one Redis round trip before its provider call. Each message keeps its own lane: the batch only
     * shares the round trip, never makes a message wait for another.
     *
     * @param botId the bot of every message
     * @param batch heads of distinct lanes, in the order they became ready
     * @return per message, in order: its step, or the provider call it was granted
     */
    public List<Next> processBatch(String botId, List<PendingMessage> batch) {
        long now = clock.millis();
        Next[] out = new Next[batch.size()];
        List<Prepared.Ask> asks = new ArrayList<>(batch.size());
        List<Integer> positions = new ArrayList<>(batch.size());
        for (PendingMessage p : batch) { // checked before any message takes a slot or a permit
            if (!p.message().getBotPool().isEmpty() || !p.message().getBotId().equals(botId)) {
                throw new IllegalArgumentException("a batch of bot " + botId + " holds " + p);
            }
        }
        long backoffMs = policy.retryBackoff().toMillis();
        for (int i = 0; i < batch.size(); i++) {
            PendingMessage p = batch.get(i);
            Prepared prepared;
            try {
                prepared = p.acceptedAs() != null ? new Prepared.Known(outcomes.resultOfAccepted(p))
                        : admission.prepare(p, now);
            } catch (RuntimeException e) {
                // One message's failure never drops the others' steps (and the slots and permits they hold).
                log.error("preparing {} failed; its lane retries in {} ms", p, backoffMs, e);
                prepared = new Prepared.Known(new Step.RetryAt(now + backoffMs));
            }
            if (prepared instanceof Prepared.Known known) {
                out[i] = Next.of(known.step());
            } else if (prepared instanceof Prepared.Ready ready) {
                out[i] = Next.call(() -> callReserved(ready));
            } else if (prepared instanceof Prepared.Ask ask) {
                asks.add(ask);
                positions.add(i);
            }
        }
        if (asks.isEmpty()) {
            return List.of(out);
        }
        PollLease l = lease;
        if (l != null && !l.held()) {
            // no grant while the partitions may be another sender's (PollLease): a grant not used would cost the bot's
            // shared rate; the asks give their permits back and ask again when the poll loop has renewed the lease
            for (int j = 0; j < asks.size(); j++) {
                breakers.release(botId);
                out[positions.get(j)] = Next.of(retryAt(now + ProviderCall.LEASE_RECHECK_MS, asks.get(j).expiresAt()));
            }
            return List.of(out);
        }
        List<BudgetRequest> requests = new ArrayList<>(asks.size());
        asks.forEach(a -> requests.add(a.request()));
        List<Decision> decisions;
        long askedAt = clock.millis(); // the arrival guard counts a slot from here: never after Redis's instant
        try {
            decisions = budget.tryAcquireAll(botId, requests);
            if (decisions.size() != asks.size()) {
                throw new IllegalStateException("the budget answered " + decisions.size() + " decisions to "
                        + asks.size() + " requests");
            }
            batchCalls.increment();
            batchRequests.add(asks.size());
            batchGrants.add(decisions.stream().filter(Decision::granted).count());
            if (budget.state() == BudgetState.SHARED) {
                busy.learn(botId, askedAt, decisions); // when asking again is worth a round trip (BusyBots)
            }
        } catch (RuntimeException e) {
            // BudgetUnavailableException, or anything else: the asks give their breaker permits back and wait.
            long at = refusals.unavailable(botId, e, asks.size(), now);
            for (int j = 0; j < asks.size(); j++) {
                breakers.release(botId);
                out[positions.get(j)] = Next.of(retryAt(at, asks.get(j).expiresAt()));
            }
            return List.of(out);
        }
        for (int j = 0; j < asks.size(); j++) {
            Prepared.Ask a = asks.get(j);
            try {
                out[positions.get(j)] = decided(a, decisions.get(j), now, askedAt);
            } catch (RuntimeException e) {
                // decided() gave its breaker permit back before failing, and takes a bot slot only as its last step
                log.error("deciding {} failed; its lane retries in {} ms", a.p(), backoffMs, e);
                out[positions.get(j)] = Next.of(retryAt(now + backoffMs, a.expiresAt()));
            }
        }
        return List.of(out);
    }

    /** A reserved slot that was due: checked again right before the call (the hand-over can be late). */
    private Step callReserved(Prepared.Ready r) {
        // The hand-over to a sending thread can be late on a loaded host.
        long late = clock.millis() - r.slotAtMs();
        if (late > pacer.lateSlotMs(r.bot(), r.p())) {
            slots.release(r.bot());
            breakers.release(r.bot());
            metrics.slotForfeited(r.bot());
            return retryAt(clock.millis(), r.expiresAt()); // the slot passes unused; the lane asks again
        }
        return provider.call(r.p(), r.bot(), r.target(), r.expiresAt());
    }

    /** What a one-bot message does with its budget decision. */
    private Next decided(Prepared.Ask a, Decision decision, long now, long askedAt) {
        PendingMessage p = a.p();
        String bot = a.bot();
        if (decision.sentMarkChecked()) {
            p.sentMarkChecked(true);
        }
        if (decision.limit() == Limit.ALREADY_SENT) {
            breakers.release(bot);
            p.releaseAttemptSlot();
            Step step = outcomes.replay(p, MarkValues.parse(decision.sentMark()));
            return Next.of(step == null ? retryAt(now + 1, a.expiresAt()) : step);
        }
        if (decision.granted()) {
            p.inFlightMarked(decision.inFlightMarked()); // then its SENT mark may ride on a later call
            if (!p.sentMarkChecked()) {
                // The budget decided without Redis (outage fallback): read the mark now; the grant is spent.
                Step marked;
                try {
                    marked = outcomes.checkSentMark(p);
                } catch (RuntimeException e) {
                    breakers.release(bot); // the only step of a decision that can fail while the permit is held
                    throw e;
                }
                if (marked != null) {
                    breakers.release(bot);
                    p.releaseAttemptSlot();
                    return Next.of(marked);
                }
            }
            p.releaseAttemptSlot();
            p.keptTurn(false);
            metrics.budgetGranted(bot, 1);
            // the slot as the arrival guard counts it: from before the request, less the wait's rounding up to whole
            // ms, so never later than Redis's instant of it
            p.guardedGrant(decision.grantSeq(), askedAt + Math.max(0, decision.retryIn().toMillis() - 1));
            if (decision.isReservation()) {
                // The budget gave this message the bot's next free slot: it waits for it, then sends without asking.
                breakers.release(bot);
                // The wait counts from Redis's "now", which lies between sending the request and reading the answer:
                // counted from the answer it never ends before the slot (counted from the request, a slow round trip
                // would move every slot of the batch early, and early sends bunch at the provider).
                long sendAt = clock.millis() + decision.retryIn().toMillis();
                p.reserved(sendAt);
                return Next.of(retryAt(sendAt, a.expiresAt()));
            }
            if (!slots.tryAcquire(bot)) {
                // Another lane took the last slot meanwhile (rare): this grant is spent, the cap holds.
                breakers.release(bot);
                return Next.of(DeliveryPolicy.waitForBot(bot, a.expiresAt()));
            }
            return Next.call(() -> provider.call(p, bot, a.target(), a.expiresAt()));
        }
        breakers.release(bot);
        return Next.of(retryAt(pacer.aligned(bot, p, refusals.refused(p, bot, decision, now, true)), a.expiresAt()));
    }

    /**
     * True for a live CRITICAL message (a reminder, a security code): its lane is served first and it asks the
     * budget without waiting for a pacer slot ({@link LanePacer#isUrgent}).
     */
    public boolean isUrgent(PendingMessage p) {
        return pacer.isUrgent(p);
    }

    /** Budget calls made by batch decisions (one per batch that asked). */
    long batchCalls() {
        return batchCalls.sum();
    }

    /** Requests those calls carried. */
    long batchRequests() {
        return batchRequests.sum();
    }

    /** Grants those calls answered (reservations included): grants per call is the batch's yield. */
    long batchGrants() {
        return batchGrants.sum();
    }

    /** Whether live messages reserve the bot's next budget slots (then the dispatcher batches a bot's ready heads). */
    boolean reservesSlots() {
        return policy.reserves();
    }

    /** The 5xx backoff's wait after {@code failures} transient failures (full jitter; for tests). */
    long fullJitterBackoffMs(int failures) {
        return policy.backoffMs(failures, random);
    }

    /** Where a redelivered message marked sent (not result-written) looks for the result of its previous owner. */
    void resultLookup(ResultLookup lookup) {
        outcomes.resultLookup(lookup);
    }

    /**
     * The partitions' lease ({@link PollLease}) checked before a budget request and before every provider call; unset
     * (tests without a consumer), both go on.
     */
    void pollLease(PollLease lease) {
        this.lease = lease;
        provider.pollLease(lease);
    }

    /** Bots whose token the provider rejected (readiness, the token gauge). */
    TokenRejections tokenRejections() {
        return tokens;
    }

    /** The circuit breaker state of a bot's provider calls (for readiness and tests). */
    String breakerState(String botId) {
        return breakers.state(botId).name();
    }
}
