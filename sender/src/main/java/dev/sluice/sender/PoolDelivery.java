package dev.sluice.sender;

import static dev.sluice.sender.DeliveryPolicy.retryAt;

import dev.sluice.avro.OutboundMessage;
import dev.sluice.metrics.SenderMetrics;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.BudgetUnavailableException;
import dev.sluice.sender.budget.Decision;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.random.RandomGenerator;

/**
 * A message with a {@code bot_pool}: after the common checks ({@link Admission#expired}, a configured bot, a chat
 * that did not block every bot, the sent mark), each active bot is asked in turn (one budget call each), least loaded
 * first ({@link PoolRanking}), skipping a bot whose token is rejected ({@link TokenRejections}), and the first that
 * grants sends. When all refuse, the lane waits for the earliest of their waits (the earliest gate
 * decides); when some are full, it is parked until a call of one of them ends or another bot admits again.
 * A pool with one active bot takes attempt slots in the pacer like a one-bot message.
 *
 * <p>Thread-safe: no state of its own. Any sending thread calls it; the {@link PendingMessage} it changes is owned
 * by the thread holding that lane's head. The random source is shared and must be thread-safe.
 */
final class PoolDelivery {
    private final BudgetPort budget;
    private final Admission admission;
    private final LanePacer pacer;
    private final Refusals refusals;
    private final ProviderCall provider;
    private final Outcomes outcomes;
    private final ChatRegistry chats;
    private final TokenRejections tokens;
    private final RateLimitAttribution attribution;
    private final BotSlots slots;
    private final ProviderBreakers breakers;
    private final DeliveryPolicy policy;
    private final SenderMetrics metrics;
    private final Clock clock;
    private final RandomGenerator random;

    PoolDelivery(BudgetPort budget, Admission admission, LanePacer pacer, Refusals refusals, ProviderCall provider,
                 Outcomes outcomes, ChatRegistry chats, TokenRejections tokens, RateLimitAttribution attribution, BotSlots slots,
                 ProviderBreakers breakers, DeliveryPolicy policy, SenderMetrics metrics, Clock clock,
                 RandomGenerator random) {
        this.budget = Objects.requireNonNull(budget);
        this.admission = Objects.requireNonNull(admission);
        this.pacer = Objects.requireNonNull(pacer);
        this.refusals = Objects.requireNonNull(refusals);
        this.provider = Objects.requireNonNull(provider);
        this.outcomes = Objects.requireNonNull(outcomes);
        this.chats = Objects.requireNonNull(chats);
        this.tokens = Objects.requireNonNull(tokens);
        this.attribution = Objects.requireNonNull(attribution);
        this.slots = Objects.requireNonNull(slots);
        this.breakers = Objects.requireNonNull(breakers);
        this.policy = Objects.requireNonNull(policy);
        this.metrics = Objects.requireNonNull(metrics);
        this.clock = Objects.requireNonNull(clock);
        this.random = Objects.requireNonNull(random);
    }

    /** One step of a message with a {@code bot_pool}: each bot in turn, the first that grants sends. */
    Step process(PendingMessage p) {
        OutboundMessage m = p.message();
        long now = clock.millis();
        Long expiresAt = Admission.expiresAt(p);
        Step expired = admission.expired(p, now);
        if (expired != null) {
            return expired;
        }
        // least loaded first (PoolRanking): fewest calls in flight, then the earliest free attempt slot
        List<String> candidates = PoolRanking.rank(admission.candidates(m), slots::inFlight,
                b -> pacer.nextFreeAtMs(b, p, now));
        if (candidates.isEmpty()) {
            return outcomes.noBot(p);
        }
        String target = chats.resolve(m.getChatId());
        List<String> active = new ArrayList<>();
        for (String bot : candidates) {
            if (!chats.isInactive(bot, target, m.getDueAt().toEpochMilli(), now)) {
                active.add(bot);
            }
        }
        if (active.isEmpty()) {
            return outcomes.inactive(p, target);
        }
        if (!p.sentMarkChecked()) {
            Step marked = outcomes.checkSentMark(p);
            if (marked != null) {
                return marked;
            }
        }
        boolean single = active.size() == 1;
        long wait = Long.MAX_VALUE;
        Set<String> full = new LinkedHashSet<>();
        for (String bot : active) {
            long parked = tokens.parkedUntil(bot, now);
            if (parked > 0) { // its token is rejected: the other bots of the pool go on
                wait = Math.min(wait, parked);
                continue;
            }
            long botGate = attribution.botGateUntilMs(bot);
            if (botGate > now) {
                // A bot-wide penalty is running: any call would be refused and extend it. The lane gives up its
                // pacer slot, so after the gate the lanes come back one slot at a time, not as a burst.
                p.releaseAttemptSlot();
                wait = Math.min(wait, botGate + policy.jitterMs(random));
                continue;
            }
            if (single && !p.holdsAttemptSlot()) {
                long slot = pacer.reserve(bot, p, now);
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
                wait = Math.min(wait, now + breakers.openWait().toMillis() + policy.jitterMs(random));
                continue;
            }
            Decision decision;
            long askedAt = clock.millis();
            try {
                decision = budget.tryAcquire(new BudgetRequest(bot, target, pacer.laneOf(p)));
            } catch (BudgetUnavailableException e) {
                breakers.release(bot);
                wait = Math.min(wait, refusals.unavailable(bot, e, 1, now));
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
                return provider.call(p, bot, target, expiresAt);
            }
            breakers.release(bot);
            wait = Math.min(wait, refusals.refused(p, bot, decision, now, single));
        }
        if (!full.isEmpty()) {
            // Wake when a call of a full bot ends, or when another bot of the pool admits again: a lane never
            // waits only on a bot whose calls may not come back soon, nor past a bot that admits sooner.
            return new Step.WaitForBot(full, expiresAt == null ? wait : Math.min(wait, expiresAt));
        }
        return retryAt(wait, expiresAt);
    }
}
