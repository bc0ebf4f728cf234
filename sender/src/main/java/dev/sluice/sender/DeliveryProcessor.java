package dev.sluice.sender;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.metrics.ProviderOutcome;
import dev.sluice.metrics.RateLimitScope;
import dev.sluice.metrics.SenderMetrics;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.BudgetUnavailableException;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.Limit;
import dev.sluice.sender.budget.PenaltyScope;
import dev.sluice.sender.idempotency.RedisSentMarks;
import dev.sluice.sender.idempotency.SentMarks;
import dev.sluice.sender.idempotency.SentMarksUnavailableException;
import dev.sluice.sender.provider.SendOutcome;
import dev.sluice.sender.provider.Transport;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One processing step of a lane's head: deadline, idempotency key, bot choice, budget decision, provider
 * call, classified outcome. Never sleeps: everything that must wait returns {@link Step.RetryAt} (or
 * {@link Step.WaitForBot}) and the scheduler parks the lane.
 *
 * <ul>
 * <li>past {@code expires_at} → EXPIRED (a wait that would end after the deadline is cut to it); more than
 *     {@code sender.max.reschedules} waits forced by the provider (429, 5xx, gates) → EXPIRED</li>
 * <li>the chat blocked this bot earlier (403 seen by this sender) → SKIPPED_INACTIVE, no call; a group that
 *     migrated is sent to its new id, so the lane follows the migration in order</li>
 * <li>the message id is already marked sent in Redis (a redelivery after a crash) → not sent again</li>
 * <li>pools ({@code bot_pool}): each bot is tried in turn and the first whose budget grants sends; when all
 *     refuse, the lane waits for the earliest of their waits (the earliest gate decides)</li>
 * <li>at most {@code sender.max.in.flight.per.bot} calls per bot in flight; a circuit breaker per bot stops
 *     calls while 5xx and connect errors dominate</li>
 * <li>200 → DELIVERED (marked sent); 403 → BLOCKED (chat inactive); 400 migrate → resend to the new id;
 *     other 4xx → FAILED</li>
 * <li>429 → attributed to chat, group or bot ({@link RateLimitAttribution}), written as a shared gate of
 *     that scope, and the lane waits retry_after plus a one-sided jitter (a pool message moves to the other
 *     bots at once); 429s do not use up the attempt budget</li>
 * <li>5xx / connect errors → exponential backoff with full jitter (base·2^(n−1), capped), FAILED after
 *     {@code sender.max.attempts} such failures; a read timeout after the request was sent → UNCERTAIN
 *     (marked sent), or resent like a 5xx for classes in {@code sender.resend.uncertain.classes}</li>
 * </ul>
 */
public final class DeliveryProcessor {
    private static final Logger log = LoggerFactory.getLogger(DeliveryProcessor.class);
    /** When the budget store is unreachable (and the budget throws) the lane waits this long and asks again. */
    static final Duration BUDGET_UNAVAILABLE_WAIT = Duration.ofSeconds(1);

    private final BudgetPort budget;
    private final dev.sluice.sender.budget.BudgetConfig budgetConfig;
    private final Transport transport;
    private final ResultSink results;
    private final SentMarks sentMarks;
    private final Clock clock;
    private final RandomGenerator random;
    private final SenderMetrics metrics;
    private final Set<String> knownBots;
    private final String instanceId;
    private final int maxAttempts;
    private final int maxReschedules;
    private final Set<NotificationClass> resendUncertain;
    private final Duration backoff;
    private final Duration backoffMax;
    private final Duration retryAfterJitter;
    private final BotPacer pacer;
    private final RateLimitAttribution attribution;
    private final BotSlots slots;
    private final ProviderBreakers breakers;
    private final ChatRegistry chats;
    private final String backfillTopic;
    private ResultLookup resultLookup = ResultLookup.NONE;
    /** The budget reads the sent marks of the same Redis in its decision: no separate GET per message. */
    private final boolean foldSentMarks;
    /** {@code budget.reservation.max.ms}: live messages may take the bot's next global slot this far ahead. */
    private final Duration reservationMax;
    /** {@code budget.reservation.late.max.ms}, -1 when not configured. */
    private final long lateSlotMaxMs;
    /** Half the reservation horizon (0: none): waiting live lanes of a bot are aligned to it, see {@link #aligned}. */
    private final long batchWindowMs;

    DeliveryProcessor(SenderConfig config, BudgetPort budget, Transport transport, ResultSink results,
                      SentMarks sentMarks, SenderMetrics metrics, Clock clock, RandomGenerator random, BotSlots slots,
                      ChatRegistry chats) {
        this.budget = Objects.requireNonNull(budget);
        this.transport = Objects.requireNonNull(transport);
        this.results = Objects.requireNonNull(results);
        this.sentMarks = Objects.requireNonNull(sentMarks);
        this.metrics = Objects.requireNonNull(metrics);
        this.clock = Objects.requireNonNull(clock);
        this.random = Objects.requireNonNull(random);
        this.slots = Objects.requireNonNull(slots);
        this.chats = Objects.requireNonNull(chats);
        this.knownBots = Set.copyOf(config.bots().keySet());
        // Reservations and aligned waits only where the budget can reserve (Redis): elsewhere they would only delay.
        this.reservationMax = budget.reserves() ? config.budgetConfig().reservationMax() : Duration.ZERO;
        this.batchWindowMs = reservationMax.toMillis() / 2;
        this.lateSlotMaxMs = config.budgetConfig().reservationLateMax().map(Duration::toMillis).orElse(-1L);
        this.foldSentMarks = budget.sentMarksRedisUrl().isPresent()
                && budget.sentMarksRedisUrl().equals(sentMarks.redisUrl());
        this.backfillTopic = config.topics().outboxBackfill();
        this.instanceId = config.instanceId();
        this.maxAttempts = config.maxAttempts();
        this.maxReschedules = config.maxReschedules();
        this.resendUncertain = config.resendUncertainClasses();
        this.backoff = config.retryBackoff();
        this.backoffMax = config.retryBackoffMax();
        this.retryAfterJitter = config.retryAfterJitter();
        dev.sluice.sender.budget.BudgetConfig budgetConfig = config.budgetConfig();
        this.budgetConfig = budgetConfig;
        this.pacer = new BotPacer(key -> {
            if (!key.endsWith(BACKFILL_PACER)) {
                return budgetConfig.limitsFor(key);
            }
            // Backfill lanes take slots of their own at the share above the live headroom, so live lanes never
            // queue behind a backfill backlog in the pacer; the budget still decides (HEADROOM refusals).
            dev.sluice.sender.budget.BudgetLimits l = budgetConfig.limitsFor(
                    key.substring(0, key.length() - BACKFILL_PACER.length()));
            return l.withGlobalRate(Math.max(0.01, l.globalRatePerS() * (1 - budgetConfig.backfillHeadroom())));
        });
        this.attribution = new RateLimitAttribution(config.botPenaltyWindow(), config.botPenaltyMinChats());
        this.breakers = new ProviderBreakers(config.breakerFailureRatePercent(), config.breakerWindowCalls(),
                config.breakerOpen(), config.breakerHalfOpenCalls());
    }

    /**
     * One step of a lane's head. A message of one bot goes through {@link #processBatch} as a batch of one; a
     * pool message asks its bots in turn.
     */
    public Step process(PendingMessage p) {
        if (p.acceptedAs() != null) {
            return resultOfAccepted(p);
        }
        if (p.message().getBotPool().isEmpty()) {
            return processBatch(p.message().getBotId(), List.of(p)).get(0).run();
        }
        return processPool(p);
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

    /** A message of one bot that passed every local check and asks the budget. */
    private record Ask(PendingMessage p, String bot, String target, Long expiresAt, BudgetRequest request) {
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
        List<Ask> asks = new ArrayList<>(batch.size());
        List<Integer> positions = new ArrayList<>(batch.size());
        for (PendingMessage p : batch) { // checked before any message takes a slot or a permit
            if (!p.message().getBotPool().isEmpty() || !p.message().getBotId().equals(botId)) {
                throw new IllegalArgumentException("a batch of bot " + botId + " holds " + p);
            }
        }
        for (int i = 0; i < batch.size(); i++) {
            PendingMessage p = batch.get(i);
            Object prepared;
            try {
                prepared = p.acceptedAs() != null ? resultOfAccepted(p) : prepare(p, now);
            } catch (RuntimeException e) {
                // One message's failure never drops the others' steps (and the slots and permits they hold).
                log.error("preparing {} failed; its lane retries in {} ms", p, backoff.toMillis(), e);
                prepared = new Step.RetryAt(now + backoff.toMillis());
            }
            if (prepared instanceof Step step) {
                out[i] = Next.of(step);
            } else if (prepared instanceof Next next) {
                out[i] = next;
            } else {
                asks.add((Ask) prepared);
                positions.add(i);
            }
        }
        if (asks.isEmpty()) {
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
        } catch (RuntimeException e) {
            // BudgetUnavailableException, or anything else: the asks give their breaker permits back and wait.
            if (e instanceof BudgetUnavailableException) {
                metrics.redisError("connection");
            }
            log.warn("budget unavailable for bot {} ({}); {} chats wait {} ms", botId, e.toString(), asks.size(),
                    BUDGET_UNAVAILABLE_WAIT.toMillis());
            for (int j = 0; j < asks.size(); j++) {
                breakers.release(botId);
                out[positions.get(j)] = Next.of(retryAt(now + BUDGET_UNAVAILABLE_WAIT.toMillis(), asks.get(j).expiresAt()));
            }
            return List.of(out);
        }
        for (int j = 0; j < asks.size(); j++) {
            Ask a = asks.get(j);
            try {
                out[positions.get(j)] = decided(a, decisions.get(j), now, askedAt);
            } catch (RuntimeException e) {
                // decided() gave its breaker permit back before failing, and takes a bot slot only as its last step
                log.error("deciding {} failed; its lane retries in {} ms", a.p(), backoff.toMillis(), e);
                out[positions.get(j)] = Next.of(retryAt(now + backoff.toMillis(), a.expiresAt()));
            }
        }
        return List.of(out);
    }

    /**
     * The local checks of a one-bot message before the budget: a step, an {@link Ask}, or (a reserved slot that
     * is due) the provider call as a {@link Next}.
     */
    private Object prepare(PendingMessage p, long now) {
        p.waitsForTurnOnly(false);
        OutboundMessage m = p.message();
        Long expiresAt = m.getExpiresAt() == null ? null : m.getExpiresAt().toEpochMilli();
        Step expired = expiredBeforeSending(p, now);
        if (expired != null) {
            return expired;
        }
        String bot = m.getBotId();
        if (!knownBots.contains(bot)) {
            return finish(p, DeliveryStatus.FAILED, "no token configured for bot '" + bot + "'", null, null);
        }
        String target = chats.resolve(m.getChatId());
        if (chats.isInactive(bot, target)) {
            return finish(p, DeliveryStatus.SKIPPED_INACTIVE, "chat " + target
                    + " blocked the bot or was deactivated (403 seen by this sender); not sent", null, null);
        }
        // While the budget decides without Redis (outage fallback) the mark is read before asking, not after a
        // grant: a read that waits out its timeout would otherwise turn a paced grant into a late, bunched send.
        if (!p.sentMarkChecked() && (!foldSentMarks || budget.state() != dev.sluice.metrics.BudgetState.SHARED)) {
            Step marked = checkSentMark(p);
            if (marked != null) {
                return marked;
            }
        }
        long botGate = attribution.botGateUntilMs(bot);
        if (botGate > now) {
            // A bot-wide penalty is running: any call would be refused and extend it. The lane gives up its
            // pacer slot, so after the gate the lanes come back one slot at a time, not as a burst.
            p.releaseAttemptSlot();
            p.clearReservation(); // sending into a bot-wide penalty would extend it: ask again after the gate
            return retryAt(botGate + jitterMs(), expiresAt);
        }
        if (p.reservedSendAtMs() >= 0) {
            if (now - p.reservedSendAtMs() <= lateSlotMs(bot, p)) {
                return useReservation(p, bot, target, expiresAt, now);
            }
            // Too late for its slot (a loaded host): sent now it could bunch with the next slots at the provider,
            // whose window counts arrivals. The slot passes unused; the lane asks again.
            p.clearReservation();
            metrics.slotForfeited(bot);
        }
        if (!p.holdsAttemptSlot() && !asksAhead(p)) {
            // An urgent message skips the pacer's FIFO of attempt slots: behind a backlog the next free slot can
            // be seconds away, and a reminder must not wait for every lane that asked before it.
            long slot = pacer.reserve(pacerKey(bot, p), now);
            p.holdAttemptSlot();
            if (slot > now) {
                p.waitsForTurnOnly(true);
                return retryAt(aligned(p, slot), expiresAt);
            }
        }
        // The in-flight cap counts provider calls only: a budget round trip does not hold a bot slot, so
        // lanes refused by the budget (a backfill backlog) never crowd out lanes that would be granted.
        if (!slots.hasRoom(bot)) {
            return new Step.WaitForBot(Set.of(bot), expiresAt == null ? Long.MAX_VALUE : expiresAt);
        }
        BudgetRequest request = new BudgetRequest(bot, target, laneOf(p));
        if (foldSentMarks && !p.sentMarkChecked()) {
            request = request.checkingSentMark(m.getId());
        }
        if (!reservationMax.isZero()) {
            request = request.reservingUpTo(reservationMax);
        }
        // The breaker's permit last: nothing after it can fail and leave it taken.
        if (!breakers.tryAcquire(bot)) {
            return retryAt(now + breakers.openWait().toMillis() + jitterMs(), expiresAt);
        }
        return new Ask(p, bot, target, expiresAt, request);
    }

    /**
     * How late a reserved slot may still be used: {@code budget.reservation.late.max.ms}, else one interval of the
     * bot's rate, at least 2 ms.
     */
    private long lateSlotMs(String bot, PendingMessage p) {
        return lateSlotMaxMs >= 0 ? lateSlotMaxMs : Math.max(2, pacer.intervalMillis(pacerKey(bot, p)));
    }

    /** A message holding a reserved budget slot: the provider call once the slot is due and the bot has room. */
    private Object useReservation(PendingMessage p, String bot, String target, Long expiresAt, long now) {
        if (now < p.reservedSendAtMs()) {
            return retryAt(p.reservedSendAtMs(), expiresAt); // woken early: never before the slot
        }
        if (!slots.hasRoom(bot)) {
            return new Step.WaitForBot(Set.of(bot), expiresAt == null ? Long.MAX_VALUE : expiresAt);
        }
        if (!breakers.tryAcquire(bot)) {
            p.clearReservation(); // the slot passes unused: the provider is failing
            return retryAt(now + breakers.openWait().toMillis() + jitterMs(), expiresAt);
        }
        if (!slots.tryAcquire(bot)) {
            breakers.release(bot);
            return new Step.WaitForBot(Set.of(bot), expiresAt == null ? Long.MAX_VALUE : expiresAt);
        }
        long slotAt = p.reservedSendAtMs();
        p.clearReservation();
        return Next.call(() -> {
            // Checked again right before the call: the hand-over to a sending thread can be late on a loaded host.
            long late = clock.millis() - slotAt;
            if (late > lateSlotMs(bot, p)) {
                slots.release(bot);
                breakers.release(bot);
                metrics.slotForfeited(bot);
                return retryAt(clock.millis(), expiresAt); // the slot passes unused; the lane asks again
            }
            return call(p, bot, target, expiresAt);
        });
    }

    /** What a one-bot message does with its budget decision. */
    private Next decided(Ask a, Decision decision, long now, long askedAt) {
        PendingMessage p = a.p();
        String bot = a.bot();
        if (decision.sentMarkChecked()) {
            p.sentMarkChecked(true);
        }
        if (decision.limit() == Limit.ALREADY_SENT) {
            breakers.release(bot);
            p.releaseAttemptSlot();
            Step step = markedStep(p, RedisSentMarks.parse(decision.sentMark()));
            return Next.of(step == null ? retryAt(now + 1, a.expiresAt()) : step);
        }
        if (decision.granted()) {
            if (!p.sentMarkChecked()) {
                // The budget decided without Redis (outage fallback): read the mark now; the grant is spent.
                Step marked;
                try {
                    marked = checkSentMark(p);
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
                return Next.of(new Step.WaitForBot(Set.of(bot), a.expiresAt() == null ? Long.MAX_VALUE : a.expiresAt()));
            }
            return Next.call(() -> call(p, bot, a.target(), a.expiresAt()));
        }
        breakers.release(bot);
        return Next.of(retryAt(aligned(p, refused(p, bot, decision, now, true)), a.expiresAt()));
    }

    /**
     * A live lane that must wait (a pacer slot, a refusal) with reservations on waits until the next multiple of
     * the batch window instead: the lanes of a bot that wait meanwhile become ready at the same instant and are
     * decided together, several per budget round trip ({@link #processBatch}), and a refused one costs a share
     * of a round trip instead of one of its own. Later is always safe; the wait grows by less than one window.
     */
    private long aligned(PendingMessage p, long atMs) {
        if (batchWindowMs <= 0 || laneOf(p) == dev.sluice.avro.Lane.BACKFILL || asksAhead(p)) {
            return atMs;
        }
        return Math.floorDiv(atMs + batchWindowMs - 1, batchWindowMs) * batchWindowMs;
    }

    /** EXPIRED when the deadline passed or the provider forced too many waits; else null (go on). */
    private Step expiredBeforeSending(PendingMessage p, long now) {
        OutboundMessage m = p.message();
        if (m.getExpiresAt() != null && now >= m.getExpiresAt().toEpochMilli()) {
            return finish(p, DeliveryStatus.EXPIRED, "deadline expires_at " + m.getExpiresAt() + " passed before sending",
                    null, null);
        }
        if (p.reschedules() > maxReschedules) {
            return finish(p, DeliveryStatus.EXPIRED, "reschedule limit reached: " + p.reschedules()
                    + " waits forced by the provider (sender.max.reschedules=" + maxReschedules + ")", null, null);
        }
        return null;
    }

    /** A message with a {@code bot_pool}: each bot in turn, the first that grants sends. */
    private Step processPool(PendingMessage p) {
        OutboundMessage m = p.message();
        long now = clock.millis();
        Long expiresAt = m.getExpiresAt() == null ? null : m.getExpiresAt().toEpochMilli();
        Step expired = expiredBeforeSending(p, now);
        if (expired != null) {
            return expired;
        }
        List<String> candidates = candidates(m);
        if (candidates.isEmpty()) {
            return finish(p, DeliveryStatus.FAILED, "no token configured for bot '" + m.getBotId() + "'"
                    + (m.getBotPool().isEmpty() ? "" : " nor for any bot of its pool " + m.getBotPool()), null, null);
        }
        String target = chats.resolve(m.getChatId());
        List<String> active = new ArrayList<>();
        for (String bot : candidates) {
            if (!chats.isInactive(bot, target)) {
                active.add(bot);
            }
        }
        if (active.isEmpty()) {
            return finish(p, DeliveryStatus.SKIPPED_INACTIVE, "chat " + target
                    + " blocked the bot or was deactivated (403 seen by this sender); not sent", null, null);
        }
        if (!p.sentMarkChecked()) {
            Step marked = checkSentMark(p);
            if (marked != null) {
                return marked;
            }
        }
        boolean single = active.size() == 1;
        long wait = Long.MAX_VALUE;
        Set<String> full = new LinkedHashSet<>();
        for (String bot : active) {
            long botGate = attribution.botGateUntilMs(bot);
            if (botGate > now) {
                // A bot-wide penalty is running: any call would be refused and extend it. The lane gives up its
                // pacer slot, so after the gate the lanes come back one slot at a time, not as a burst.
                p.releaseAttemptSlot();
                wait = Math.min(wait, botGate + jitterMs());
                continue;
            }
            if (single && !p.holdsAttemptSlot()) {
                long slot = pacer.reserve(pacerKey(bot, p), now);
                p.holdAttemptSlot();
                if (slot > now) {
                    wait = Math.min(wait, slot);
                    continue;
                }
            }
            // The in-flight cap counts provider calls only: a budget round trip does not hold a bot slot, so
            // lanes refused by the budget (a backfill backlog) never crowd out lanes that would be granted.
            if (!slots.hasRoom(bot)) {
                full.add(bot);
                continue;
            }
            if (!breakers.tryAcquire(bot)) {
                wait = Math.min(wait, now + breakers.openWait().toMillis() + jitterMs());
                continue;
            }
            Decision decision;
            long askedAt = clock.millis();
            try {
                decision = budget.tryAcquire(new BudgetRequest(bot, target, laneOf(p)));
            } catch (BudgetUnavailableException e) {
                breakers.release(bot);
                metrics.redisError("connection");
                log.warn("budget unavailable for bot {} ({}); chat waits {} ms", bot, e.getMessage(),
                        BUDGET_UNAVAILABLE_WAIT.toMillis());
                wait = Math.min(wait, now + BUDGET_UNAVAILABLE_WAIT.toMillis());
                continue;
            }
            if (decision.granted()) {
                p.releaseAttemptSlot();
                p.keptTurn(false);
                metrics.budgetGranted(bot, 1);
                p.guardedGrant(decision.grantSeq(), askedAt);
                if (!slots.tryAcquire(bot)) {
                    // Another lane took the last slot meanwhile (rare): this grant is spent, the cap holds.
                    breakers.release(bot);
                    full.add(bot);
                    continue;
                }
                return call(p, bot, target, expiresAt);
            }
            breakers.release(bot);
            wait = Math.min(wait, refused(p, bot, decision, now, single));
        }
        if (!full.isEmpty()) {
            // Wake when a call of a full bot ends, or when another bot of the pool admits again: a lane never
            // waits only on a bot whose calls may not come back soon, nor past a bot that admits sooner.
            return new Step.WaitForBot(full, expiresAt == null ? wait : Math.min(wait, expiresAt));
        }
        return retryAt(wait, expiresAt);
    }

    private static final String BACKFILL_PACER = "#backfill";

    /** Live and backfill lanes of a bot have separate attempt schedules. */
    private String pacerKey(String bot, PendingMessage p) {
        return laneOf(p) == dev.sluice.avro.Lane.BACKFILL ? bot + BACKFILL_PACER : bot;
    }

    private void deferBoth(String bot, long untilMs) {
        pacer.deferTo(bot, untilMs);
        pacer.deferTo(bot + BACKFILL_PACER, untilMs);
    }

    /** Records of {@code outbox.backfill} ask as BACKFILL whatever their field says: live keeps its headroom. */
    /**
     * True for a live CRITICAL message (a reminder, a security code). It goes ahead of routine work in this
     * instance: its lane is served first ({@link LaneScheduler}) and it asks the budget without waiting for a
     * pacer slot. The shared budget still decides whether it is sent.
     */
    public boolean isUrgent(PendingMessage p) {
        return p.message().getEventClass() == dev.sluice.avro.NotificationClass.CRITICAL
                && laneOf(p) == dev.sluice.avro.Lane.LIVE;
    }

    /** Urgent itself, or the head of a lane holding an urgent message ({@link PendingMessage#aheadOfUrgent}). */
    private boolean asksAhead(PendingMessage p) {
        return isUrgent(p) || (p.aheadOfUrgent() && laneOf(p) == dev.sluice.avro.Lane.LIVE);
    }

    private dev.sluice.avro.Lane laneOf(PendingMessage p) {
        return p.partition().topic().equals(backfillTopic) ? dev.sluice.avro.Lane.BACKFILL : p.message().getLane();
    }

    /** The pool's configured bots in the pool's order, else the message's bot; unknown bots are left out. */
    private List<String> candidates(OutboundMessage m) {
        List<String> out = new ArrayList<>();
        if (m.getBotPool().isEmpty()) {
            if (knownBots.contains(m.getBotId())) {
                out.add(m.getBotId());
            }
            return out;
        }
        for (String bot : m.getBotPool()) {
            if (knownBots.contains(bot) && !out.contains(bot)) {
                out.add(bot);
            }
        }
        return out;
    }

    /**
     * A redelivered message already marked sent is not sent again: SENT → the result the previous owner could
     * not write; RESULT_WRITTEN → no second result. If the store is unreachable the message is sent (the
     * budget decides whether anything is sent at all while Redis is down).
     */
    private Step checkSentMark(PendingMessage p) {
        OutboundMessage m = p.message();
        SentMarks.Mark mark;
        try {
            mark = sentMarks.get(m.getBotId(), m.getId());
        } catch (SentMarksUnavailableException e) {
            metrics.redisError("connection");
            log.warn("sent mark of {} unreadable ({}); sending without the idempotency check", m.getId(),
                    e.getMessage());
            mark = SentMarks.Mark.NONE;
        }
        p.sentMarkChecked(true);
        return markedStep(p, mark);
    }

    /** The step for a message whose mark was read: DONE or its result when it was sent before, else null. */
    private Step markedStep(PendingMessage p, SentMarks.Mark mark) {
        OutboundMessage m = p.message();
        switch (mark.state()) {
            case RESULT_WRITTEN -> {
                results.alreadyFinished(p);
                return Step.DONE;
            }
            case SENT -> {
                if (resultLookup.hasResult(mark.resultKey(), m.getId(), mark.atMs())) {
                    // The previous owner wrote the result and died before raising the key: no second result.
                    log.info("result of {} was written by the previous owner (found on the results topic)", m.getId());
                    results.alreadyFinished(p);
                    return Step.DONE;
                }
                log.info("{} was sent by the previous owner, which left no result: writing it, not sending", m.getId());
                DeliveryStatus status = "UNCERTAIN".equals(mark.status()) ? DeliveryStatus.UNCERTAIN
                        : DeliveryStatus.DELIVERED;
                return finish(p, status, "already sent before a redelivery (idempotency key " + m.getId()
                        + "); not sent again", null, mark.providerMessageId());
            }
            default -> {
                return null;
            }
        }
    }

    /** A refusal: the wait (epoch ms) of this bot; a GLOBAL refusal moves the bot's pacer. */
    private long refused(PendingMessage p, String bot, Decision decision, long now, boolean single) {
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
                deferBoth(bot, now + waitMs); // another replica saw the bot's penalty
            }
            return now + waitMs + jitterMs();
        }
        if (asksAhead(p) && decision.limit() == Limit.GLOBAL) {
            return now + waitMs; // asks again exactly when the budget admits: no pacer slot, no batch alignment
        }
        if (single && (decision.limit() == Limit.GLOBAL || decision.limit() == Limit.HEADROOM)) {
            // HEADROOM is the backfill share of the global limit: paced the same way, so a refused backfill
            // backlog does not come back all at once (one budget call per waiting lane per slot).
            if (laneOf(p) != dev.sluice.avro.Lane.BACKFILL && decision.limit() == Limit.GLOBAL && !p.keptTurn()
                    && waitMs < pacer.intervalMillis(pacerKey(bot, p))) {
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
            boolean reserving = !reservationMax.isZero() && laneOf(p) != dev.sluice.avro.Lane.BACKFILL
                    && decision.limit() == Limit.GLOBAL;
            pacer.deferTo(pacerKey(bot, p), now + (reserving ? Math.max(0, waitMs - reservationMax.toMillis()) : waitMs));
            p.holdAttemptSlot();
            p.keptTurn(false);
            p.waitsForTurnOnly(true); // a global refusal: an urgent message behind may ask again before the turn
            return pacer.reserve(pacerKey(bot, p), now);
        }
        return now + waitMs;
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

    /** The provider call with budget, a bot slot and the breaker's permission held. */
    private Step call(PendingMessage p, String bot, String target, Long expiresAt) {
        OutboundMessage m = p.message();
        long start = clock.millis();
        p.recordCall(start, bot);
        SendOutcome outcome;
        try {
            outcome = transport.send(bot, target, m);
        } catch (RuntimeException e) {
            outcome = new SendOutcome.TransientFailure(null, e.getClass().getSimpleName(), false);
        } finally {
            slots.release(bot);
        }
        // Recorded first: whatever fails after this point writes the result again, never calls the provider again.
        if (outcome instanceof SendOutcome.Delivered d) {
            p.accepted(DeliveryStatus.DELIVERED, d.providerMessageId());
        } else if (outcome instanceof SendOutcome.TransientFailure t && t.maybeDelivered()
                && !resendUncertain.contains(m.getEventClass())) {
            p.accepted(DeliveryStatus.UNCERTAIN, null);
        }
        long after = clock.millis();
        reportIfAnsweredLate(p, bot, after);
        long took = after - start;
        if (outcome instanceof SendOutcome.TransientFailure t) {
            breakers.recordOutage(bot, took, t.description());
        } else {
            breakers.recordAnswer(bot, took);
        }
        if (outcome instanceof SendOutcome.Delivered d) {
            metrics.providerResponse(bot, ProviderOutcome.OK);
            markSent(p, DeliveryStatus.DELIVERED, d.providerMessageId());
            metrics.lag(m.getEventClass(), Duration.ofMillis(p.lastSentAtMs() - m.getDueAt().toEpochMilli()));
            return finish(p, DeliveryStatus.DELIVERED, null, null, d.providerMessageId());
        }
        if (outcome instanceof SendOutcome.RetryAfter r) {
            metrics.providerResponse(bot, ProviderOutcome.RATE_LIMITED);
            return onTooManyRequests(p, bot, target, r, after, expiresAt);
        }
        if (outcome instanceof SendOutcome.Blocked b) {
            metrics.providerResponse(bot, ProviderOutcome.FORBIDDEN);
            chats.markInactive(bot, target);
            log.info("chat {} is inactive for bot {}: {}", target, bot, b.description());
            return finish(p, DeliveryStatus.BLOCKED, b.description(), b.errorCode(), null);
        }
        if (outcome instanceof SendOutcome.ChatMigrated mig) {
            metrics.providerResponse(bot, ProviderOutcome.CLIENT_ERROR);
            String to = Long.toString(mig.newChatId());
            chats.migrate(target, to);
            p.recordReschedule();
            log.info("chat {} migrated to {}: its lane follows", target, to);
            return retryAt(after + 1, expiresAt); // at once, to the new id, still at the head of its lane
        }
        if (outcome instanceof SendOutcome.PermanentFailure f) {
            metrics.providerResponse(bot, ProviderOutcome.CLIENT_ERROR);
            return finish(p, DeliveryStatus.FAILED, f.description(), f.errorCode(), null);
        }
        SendOutcome.TransientFailure t = (SendOutcome.TransientFailure) outcome;
        metrics.providerResponse(bot, t.errorCode() != null && t.errorCode() >= 500 ? ProviderOutcome.SERVER_ERROR
                : ProviderOutcome.NETWORK_ERROR);
        if (t.maybeDelivered() && !resendUncertain.contains(m.getEventClass())) {
            // The request reached the provider and no answer came: it may have been delivered. Sending again
            // could duplicate it; this class's policy says not to.
            markSent(p, DeliveryStatus.UNCERTAIN, null);
            return finish(p, DeliveryStatus.UNCERTAIN, "no answer after the request was sent (" + t.description()
                    + "); may have been delivered, not resent for class " + m.getEventClass(), t.errorCode(), null);
        }
        p.recordTransientFailure();
        p.recordReschedule();
        if (p.transientFailures() >= maxAttempts) {
            return finish(p, DeliveryStatus.FAILED, "gave up after " + p.transientFailures() + " failed attempts: "
                    + t.description(), t.errorCode(), null);
        }
        return retryAt(after + fullJitterBackoffMs(p.transientFailures()), expiresAt);
    }

    /**
     * A message the provider already accepted whose result step failed (an exception while building or writing
     * it): its result again, never a second provider call.
     */
    private Step resultOfAccepted(PendingMessage p) {
        String reason = p.acceptedAs() == DeliveryStatus.UNCERTAIN
                ? "no answer after the request was sent; may have been delivered, not resent" : null;
        return finish(p, p.acceptedAs(), reason, null, p.acceptedProviderMessageId());
    }

    private void markSent(PendingMessage p, DeliveryStatus status, Long providerMessageId) {
        try {
            sentMarks.markSent(p.message().getBotId(), p.message().getId(), status.name(), providerMessageId,
                    clock.millis(), chats.resolve(p.message().getChatId()));
        } catch (SentMarksUnavailableException e) {
            metrics.redisError("connection");
            log.warn("could not mark {} as sent ({}); a redelivery after a crash could send it again",
                    p.message().getId(), e.getMessage());
        }
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
            deferBoth(bot, gateUntil);
        }
        p.recordReschedule();
        log.info("429 for bot {} chat {}: retry after {} ms, attributed to {} ({})", bot, target,
                r.retryAfter().toMillis(), scope, r.description());
        if (p.message().getBotPool().size() > 1) {
            return retryAt(after + 1, expiresAt); // the gate now refuses this bot: the others take the message
        }
        return retryAt(gateUntil + jitterMs(), expiresAt);
    }

    /** One-sided jitter in [0, sender.retry.after.jitter.ms]: never earlier than the wait itself. */
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

    /** Where a redelivered message marked sent (not result-written) looks for the result of its previous owner. */
    void resultLookup(ResultLookup lookup) {
        this.resultLookup = Objects.requireNonNull(lookup);
    }

    /** The circuit breaker state of a bot's provider calls (for readiness and tests). */
    String breakerState(String botId) {
        return breakers.state(botId).name();
    }

    private static Step retryAt(long at, Long expiresAt) {
        // A wait past the deadline ends at the deadline, where the message becomes EXPIRED.
        return new Step.RetryAt(expiresAt == null ? at : Math.min(at, expiresAt));
    }

    private Step finish(PendingMessage p, DeliveryStatus status, String reason, Integer errorCode,
                        Long providerMessageId) {
        OutboundMessage m = p.message();
        String target = chats.resolve(m.getChatId());
        String bot = p.lastBotId() == null ? m.getBotId() : p.lastBotId();
        DeliveryResult r = DeliveryResult.newBuilder()
                .setMessageId(m.getId())
                .setBotId(bot)
                .setChatId(target)
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
                .setMigratedToChatId(target.equals(m.getChatId()) ? null : target)
                .setSenderInstance(instanceId)
                .build();
        metrics.result(status, m.getEventClass());
        results.emit(p, r);
        return Step.DONE;
    }
}
