package dev.sluice.sender;

import static dev.sluice.sender.DeliveryPolicy.retryAt;
import static dev.sluice.sender.DeliveryPolicy.waitForBot;

import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.metrics.BudgetState;
import dev.sluice.metrics.SenderMetrics;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.idempotency.MarkValues;
import dev.sluice.chat.ChatIds;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.random.RandomGenerator;

/**
 * The checks of a lane's head before the budget is asked, in order: the deadline and the reschedule limit, a token
 * for the bot, a token the provider rejected ({@link TokenRejections}: wait for the re-check), an inactive chat (a 403
 * of this bot seen by this sender for a message released before it, {@link ChatRegistry}; a migrated group is
 * resolved to its new id), the sent
 * mark (unless it rides in the budget's decision), a bot-wide penalty, a reserved slot, the lane's attempt slot in
 * the pacer, the bot's "not before" hint ({@link BusyBots}), a free in-flight slot of the bot, and the breaker's permit, taken last so that nothing after it can fail
 * and leave it taken. {@link #prepare} says what came of them as a {@link Prepared}.
 *
 * <p>Thread-safe: no state of its own (the pacer, slots, breakers and attribution it asks are thread-safe). Any
 * sending thread calls it; the {@link PendingMessage} it changes is owned by the thread holding that lane's head.
 * The random source is shared and must be thread-safe.
 */
final class Admission {
    /** What the checks of a one-bot message came to. */
    sealed interface Prepared {
        /** The step is known without the budget: a result written (DONE), a wait, or a park for a bot slot. */
        record Known(Step step) implements Prepared {
        }

        /**
         * Every local check passed and the breaker's permit is held: {@code request} asks the budget (the sent-mark
         * check rides in it when the budget reads the marks of the same Redis).
         */
        record Ask(PendingMessage p, String bot, String target, Long expiresAt, BudgetRequest request)
                implements Prepared {
        }

        /**
         * A budget slot reserved earlier is due: the bot slot and the breaker's permit are held and the provider
         * call may be made, unless the hand-over to a sending thread makes it later than {@code slotAtMs} allows.
         */
        record Ready(PendingMessage p, String bot, String target, Long expiresAt, long slotAtMs)
                implements Prepared {
        }
    }

    private final Set<String> knownBots;
    private final BudgetPort budget;
    private final boolean foldSentMarks;
    private final boolean markInFlight;
    private final ChatRegistry chats;
    private final TokenRejections tokens;
    private final RateLimitAttribution attribution;
    private final LanePacer pacer;
    private final BotSlots slots;
    private final ProviderBreakers breakers;
    private final Outcomes outcomes;
    private final DeliveryPolicy policy;
    private final SenderMetrics metrics;
    private final RandomGenerator random;
    private final BusyBots busy;

    /**
     * @param foldSentMarks whether the budget reads the sent marks of the same Redis in its decision (no separate
     *                      read per message)
     * @param markInFlight  whether a request also asks the budget to write the message's in-flight mark with its grant
     *                      (issue 19: the sent-mark writes ride on the budget's calls, see {@code RedisSentMarks})
     * @param busy          per bot, when the shared budget can grant again at the earliest (no request before then)
     */
    Admission(Set<String> knownBots, BudgetPort budget, boolean foldSentMarks, boolean markInFlight, ChatRegistry chats,
              TokenRejections tokens, RateLimitAttribution attribution, LanePacer pacer, BotSlots slots, ProviderBreakers breakers,
              Outcomes outcomes, DeliveryPolicy policy, SenderMetrics metrics, RandomGenerator random, BusyBots busy) {
        this.knownBots = Set.copyOf(knownBots);
        this.budget = Objects.requireNonNull(budget);
        this.foldSentMarks = foldSentMarks;
        this.markInFlight = markInFlight;
        this.chats = Objects.requireNonNull(chats);
        this.tokens = Objects.requireNonNull(tokens);
        this.attribution = Objects.requireNonNull(attribution);
        this.pacer = Objects.requireNonNull(pacer);
        this.slots = Objects.requireNonNull(slots);
        this.breakers = Objects.requireNonNull(breakers);
        this.outcomes = Objects.requireNonNull(outcomes);
        this.policy = Objects.requireNonNull(policy);
        this.metrics = Objects.requireNonNull(metrics);
        this.random = Objects.requireNonNull(random);
        this.busy = Objects.requireNonNull(busy);
    }

    /** The local checks of a one-bot message before the budget. */
    Prepared prepare(PendingMessage p, long now) {
        p.waitsForTurnOnly(false);
        OutboundMessage m = p.message();
        Long expiresAt = expiresAt(p);
        Step expired = expired(p, now);
        if (expired != null) {
            return new Prepared.Known(expired);
        }
        String bot = m.getBotId();
        if (!knownBots.contains(bot)) {
            return new Prepared.Known(outcomes.noBot(p));
        }
        long parked = tokens.parkedUntil(bot, now);
        if (parked > 0) { // the provider rejected the bot's token: wait for the re-check (TokenRejections)
            p.releaseAttemptSlot();
            p.clearReservation();
            return new Prepared.Known(retryAt(parked, expiresAt));
        }
        String target = chats.resolve(m.getChatId());
        if (chats.isInactive(bot, target, m.getDueAt().toEpochMilli(), now)) {
            return new Prepared.Known(outcomes.inactive(p, target));
        }
        // While the budget decides without Redis (outage fallback) the mark is read before asking, not after a
        // grant: a read that waits out its timeout would otherwise turn a paced grant into a late, bunched send.
        if (!p.sentMarkChecked() && (!foldSentMarks || budget.state() != BudgetState.SHARED)) {
            Step marked = outcomes.checkSentMark(p);
            if (marked != null) {
                return new Prepared.Known(marked);
            }
        }
        long botGate = attribution.botGateUntilMs(bot);
        if (botGate > now) {
            // A bot-wide penalty is running: any call would be refused and extend it. The lane gives up its
            // pacer slot, so after the gate the lanes come back one slot at a time, not as a burst.
            p.releaseAttemptSlot();
            p.clearReservation(); // sending into a bot-wide penalty would extend it: ask again after the gate
            return new Prepared.Known(retryAt(botGate + policy.jitterMs(random), expiresAt));
        }
        if (p.reservedSendAtMs() >= 0) {
            if (now - p.reservedSendAtMs() <= pacer.lateSlotMs(bot, p)) {
                return useReservation(p, bot, target, expiresAt, now);
            }
            // Too late for its slot (a loaded host): sent now it could bunch with the next slots at the provider,
            // whose window counts arrivals. The slot passes unused; the lane asks again.
            p.clearReservation();
            metrics.slotForfeited(bot);
        }
        if (!p.holdsAttemptSlot() && !pacer.asksAhead(p)) {
            // An urgent message skips the pacer's FIFO of attempt slots: behind a backlog the next free slot can
            // be seconds away, and a reminder must not wait for every lane that asked before it.
            long slot = pacer.reserve(bot, p, now);
            p.holdAttemptSlot();
            if (slot > now) {
                p.waitsForTurnOnly(true);
                return new Prepared.Known(retryAt(pacer.aligned(bot, p, slot), expiresAt));
            }
        }
        // The shared budget's last answers say it grants this bot nothing before then: asking would be a round trip
        // that sends nothing. The lane keeps its attempt slot and asks at that instant, with the bot's other lanes
        // deferred alike (one budget call decides them together). Later is always safe: the budget still decides.
        long notBefore = busy.notBeforeMs(bot, now);
        if (notBefore > now && budget.state() == BudgetState.SHARED) {
            return new Prepared.Known(retryAt(notBefore, expiresAt));
        }
        // The in-flight cap counts provider calls only: a budget round trip does not hold a bot slot, so
        // lanes refused by the budget (a backfill backlog) never crowd out lanes that would be granted.
        if (!slots.hasRoom(bot)) {
            return new Prepared.Known(waitForBot(bot, expiresAt));
        }
        BudgetRequest request = new BudgetRequest(bot, target, pacer.laneOf(p));
        if (foldSentMarks && !p.sentMarkChecked()) {
            request = request.checkingSentMark(m.getId());
        }
        if (markInFlight) {
            // exclusive: a mark of another chat refuses the grant (the id was used for another chat), and so does a
            // settled mark of this chat written since this message's mark was read (a twin was sent meanwhile; for a
            // replay, since its replayed.at); not for a message the topology re-addressed after a migration, whose old
            // chat's mark is its own (Outcomes.sameChat)
            boolean readdressed = m.getAttributes() != null
                    && m.getAttributes().containsKey(Outcomes.MIGRATED_FROM_ATTRIBUTE);
            request = request.markingInFlight(m.getId(), MarkValues.inFlight(now, ChatIds.normalise(m.getChatId())),
                    !readdressed, Outcomes.replayedAtMs(m));
        }
        if (policy.reserves()) {
            // every lane asks with the full horizon; the budget holds a routine one to the routine horizon while the
            // bot serves critical work (a recent urgent grant, on any sender), and an urgent grant starts that
            request = request.reservingUpTo(policy.reservationMax());
            if (pacer.asksAhead(p)) {
                request = request.asUrgent();
            }
        }
        // The breaker's permit last: nothing after it can fail and leave it taken.
        if (!breakers.tryAcquire(bot)) {
            return new Prepared.Known(retryAt(now + breakers.openWait().toMillis() + policy.jitterMs(random),
                    expiresAt));
        }
        return new Prepared.Ask(p, bot, target, expiresAt, request);
    }

    /** A message holding a reserved budget slot: the provider call once the slot is due and the bot has room. */
    private Prepared useReservation(PendingMessage p, String bot, String target, Long expiresAt, long now) {
        if (now < p.reservedSendAtMs()) {
            return new Prepared.Known(retryAt(p.reservedSendAtMs(), expiresAt)); // woken early: never before the slot
        }
        if (!slots.hasRoom(bot)) {
            return new Prepared.Known(waitForBot(bot, expiresAt));
        }
        if (!breakers.tryAcquire(bot)) {
            p.clearReservation(); // the slot passes unused: the provider is failing
            return new Prepared.Known(retryAt(now + breakers.openWait().toMillis() + policy.jitterMs(random),
                    expiresAt));
        }
        if (!slots.tryAcquire(bot)) {
            breakers.release(bot);
            return new Prepared.Known(waitForBot(bot, expiresAt));
        }
        long slotAt = p.reservedSendAtMs();
        p.clearReservation();
        return new Prepared.Ready(p, bot, target, expiresAt, slotAt);
    }

    /** EXPIRED (its result written) when the deadline passed or the provider forced too many waits; else null. */
    Step expired(PendingMessage p, long now) {
        OutboundMessage m = p.message();
        if (m.getExpiresAt() != null && now >= m.getExpiresAt().toEpochMilli()) {
            return outcomes.finish(p, DeliveryStatus.EXPIRED, "deadline expires_at " + m.getExpiresAt()
                    + " passed before sending", null, null);
        }
        if (policy.tooManyReschedules(p.reschedules())) {
            return outcomes.finish(p, DeliveryStatus.EXPIRED, "reschedule limit reached: " + p.reschedules()
                    + " waits forced by the provider (sender.max.reschedules=" + policy.maxReschedules() + ")",
                    null, null);
        }
        return null;
    }

    /** The pool's configured bots in the pool's order, else the message's bot; unknown bots are left out. */
    List<String> candidates(OutboundMessage m) {
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

    static Long expiresAt(PendingMessage p) {
        OutboundMessage m = p.message();
        return m.getExpiresAt() == null ? null : m.getExpiresAt().toEpochMilli();
    }
}
