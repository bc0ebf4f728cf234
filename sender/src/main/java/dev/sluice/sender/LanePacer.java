package dev.sluice.sender;

import dev.sluice.avro.Lane;
import dev.sluice.avro.NotificationClass;
import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetLimits;

/**
 * When a lane's head may ask the budget: its lane (live or backfill), whether it goes ahead of routine work (an
 * urgent message), and its attempt slot in the bot's {@link BotPacer}. Live and backfill lanes of a bot have
 * separate attempt schedules: backfill lanes take slots at the share above the live headroom, so live lanes never
 * queue behind a backfill backlog in the pacer (the budget still decides, with HEADROOM refusals).
 *
 * <p>Thread-safe: the pacer's schedules are behind its monitor and nothing else here changes. Any dispatching or
 * sending thread calls it; the {@link PendingMessage} it reads is owned by the thread holding that lane's head.
 */
final class LanePacer {
    private static final String BACKFILL_PACER = "#backfill";
    /** The schedules of an outage: attempt slots at the fallback's share of the rate ({@code budget.max.replicas}). */
    private static final String FALLBACK_PACER = "#fallback";

    private final BotPacer pacer;
    private final String backfillTopic;
    private final DeliveryPolicy policy;
    /** Whether a bot's routine lanes get the short horizon now (the budget's last word, thread-safe). */
    private final java.util.function.Predicate<String> routineShort;
    private final java.util.function.BooleanSupplier inFallback;

    LanePacer(BudgetConfig budgetConfig, String backfillTopic, DeliveryPolicy policy,
              java.util.function.Predicate<String> routineShort) {
        this(budgetConfig, backfillTopic, policy, routineShort, () -> false);
    }

    /**
     * @param inFallback whether the budget decides in its outage fallback now: it reserves no slot, so lanes are not
     *                   aligned to batch windows then, and take attempt slots at the fallback's share of the rate
     *                   (before: about a third of that share was sent, RedisStallIT)
     */
    LanePacer(BudgetConfig budgetConfig, String backfillTopic, DeliveryPolicy policy,
              java.util.function.Predicate<String> routineShort, java.util.function.BooleanSupplier inFallback) {
        this.inFallback = inFallback;
        this.backfillTopic = backfillTopic;
        this.policy = policy;
        this.routineShort = routineShort;
        BudgetConfig fallback = budgetConfig.fallbackShare();
        this.pacer = new BotPacer(key -> {
            BudgetConfig c = key.endsWith(FALLBACK_PACER) ? fallback : budgetConfig;
            String k = key.endsWith(FALLBACK_PACER) ? key.substring(0, key.length() - FALLBACK_PACER.length()) : key;
            if (!k.endsWith(BACKFILL_PACER)) {
                return c.limitsFor(k);
            }
            BudgetLimits l = c.limitsFor(k.substring(0, k.length() - BACKFILL_PACER.length()));
            return l.withGlobalRate(Math.max(0.01, l.globalRatePerS() * (1 - budgetConfig.backfillHeadroom())));
        });
    }

    /** Records of {@code outbox.backfill} ask as BACKFILL whatever their field says: live keeps its headroom. */
    Lane laneOf(PendingMessage p) {
        return p.partition().topic().equals(backfillTopic) ? Lane.BACKFILL : p.message().getLane();
    }

    /**
     * True for a live CRITICAL message (a reminder, a security code). It goes ahead of routine work in this
     * instance: its lane is served first ({@link LaneScheduler}) and it asks the budget without waiting for a
     * pacer slot. The shared budget still decides whether it is sent.
     */
    boolean isUrgent(PendingMessage p) {
        return p.message().getEventClass() == NotificationClass.CRITICAL && laneOf(p) == Lane.LIVE;
    }

    /** Urgent itself, or the head of a lane holding an urgent message ({@link PendingMessage#aheadOfUrgent}). */
    boolean asksAhead(PendingMessage p) {
        return isUrgent(p) || (p.aheadOfUrgent() && laneOf(p) == Lane.LIVE);
    }

    /** Reserves the lane's next attempt slot of {@code bot} at or after {@code nowMs}; returns it, epoch ms. */
    long reserve(String bot, PendingMessage p, long nowMs) {
        return pacer.reserve(key(bot, p), nowMs);
    }

    /** The lane's next free attempt slot of {@code bot} at or after {@code nowMs}, not reserved (pool ranking). */
    long nextFreeAtMs(String bot, PendingMessage p, long nowMs) {
        return pacer.nextFreeAtMs(key(bot, p), nowMs);
    }

    /** The spacing of the lane's attempt slots of {@code bot}, whole ms. */
    long intervalMillis(String bot, PendingMessage p) {
        return pacer.intervalMillis(key(bot, p));
    }

    /** No attempt slot of the lane's schedule of {@code bot} before {@code untilMs}. */
    void deferTo(String bot, PendingMessage p, long untilMs) {
        pacer.deferTo(key(bot, p), untilMs);
    }

    /** No attempt slot of {@code bot}, live or backfill, before {@code untilMs} (a bot-wide penalty). */
    void deferBoth(String bot, long untilMs) {
        String suffix = inFallback.getAsBoolean() ? FALLBACK_PACER : "";
        pacer.deferTo(bot + suffix, untilMs);
        pacer.deferTo(bot + BACKFILL_PACER + suffix, untilMs);
    }

    /** How late the lane's reserved slot of {@code bot} may still be used ({@link DeliveryPolicy#lateSlotMs}). */
    long lateSlotMs(String bot, PendingMessage p) {
        return policy.lateSlotMs(intervalMillis(bot, p));
    }

    /**
     * A live lane that must wait (a pacer slot, a refusal) with reservations on waits until the next multiple of
     * the bot's batch window (half the horizon its routine lanes get now) instead: the lanes of a bot that wait meanwhile become ready at the same instant and are
     * decided together, several per budget round trip ({@link DeliveryProcessor#processBatch}), and a refused one
     * costs a share of a round trip instead of one of its own. Later is always safe; the wait grows by less than
     * one window.
     */
    long aligned(String bot, PendingMessage p, long atMs) {
        if (laneOf(p) == Lane.BACKFILL || asksAhead(p) || inFallback.getAsBoolean()) {
            return atMs;
        }
        return policy.alignedMs(atMs, routineShort.test(bot));
    }

    /** The horizon the lane's request gets from the budget ({@link DeliveryPolicy#reservationMax(boolean, boolean)}). */
    java.time.Duration horizon(String bot, PendingMessage p) {
        return policy.reservationMax(asksAhead(p), routineShort.test(bot));
    }

    private String key(String bot, PendingMessage p) {
        String key = laneOf(p) == Lane.BACKFILL ? bot + BACKFILL_PACER : bot;
        return inFallback.getAsBoolean() ? key + FALLBACK_PACER : key;
    }
}
