package dev.sluice.sender.budget;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Decides an HTTP provider's budget under its limit key ({@code provider.<id>.limit.key}, e.g.
 * {@code ext:sms-api:prod}) instead of its bot id: a budget belongs to an API key, so every provider entry,
 * sender replica and outside caller that spends that key shares one bucket, one penalty gate, one AIMD rate and
 * one arrival-guard sequence. Other bot ids (Telegram bots) pass through unchanged, with every capability.
 *
 * <p>What it keeps for a re-keyed id: reservations ({@link BudgetRequest#reserveUpTo()} stays on the request),
 * the late-answer report and the drained start (both under the key), the round-trip count (forwarded). What it
 * cannot keep: the folded sent-mark check. A provider's sent marks live under its id
 * ({@code sluice:{<provider id>}:sent:*}) while its budget keys carry the limit key's hash tag, and the script
 * reads only keys of one tag (Redis Cluster), so a re-keyed request drops {@link BudgetRequest#sentMarkId()}:
 * its decision says {@link Decision#sentMarkChecked()} false and the sender reads the mark itself.
 * {@link #sentMarksRedisUrl()} is forwarded for the ids that pass through.
 *
 * <p>Immutable apart from the delegate; thread-safe when the delegate is. Owns and closes the delegate.
 */
public final class LimitKeyBudget extends ForwardingBudget {
    private final Map<String, String> keyByBot;

    /**
     * @param keyByBot bot (provider) id → budget key
     */
    public LimitKeyBudget(BudgetPort delegate, Map<String, String> keyByBot) {
        super(delegate);
        this.keyByBot = Map.copyOf(keyByBot);
    }

    /** {@code budget} deciding the given bot ids under their keys; {@code budget} itself when there are none. */
    public static BudgetPort wrap(BudgetPort budget, Map<String, String> keyByBot) {
        return keyByBot.isEmpty() ? budget : new LimitKeyBudget(budget, keyByBot);
    }

    /** The budget key of {@code botId}. */
    public String keyOf(String botId) {
        return keyByBot.getOrDefault(botId, botId);
    }

    /**
     * The request under its budget key; a re-keyed one keeps its reservation horizon and urgency but not its sent-mark
     * id.
     */
    private BudgetRequest rekey(BudgetRequest r) {
        String key = keyOf(r.botId());
        return key.equals(r.botId()) ? r
                : new BudgetRequest(key, r.chatId(), r.lane(), null, r.reserveUpTo(), null, r.urgent());
    }

    /** The routine horizon state of the bot's budget key (its requests are decided under that key). */
    @Override
    public boolean routineHorizonShort(String botId) {
        return delegate.routineHorizonShort(keyOf(botId));
    }

    @Override
    public Decision tryAcquire(BudgetRequest request) {
        return delegate.tryAcquire(rekey(request));
    }

    @Override
    public List<Decision> tryAcquireAll(String botId, List<BudgetRequest> requests) {
        for (BudgetRequest r : requests) {
            if (!r.botId().equals(botId)) {
                throw new IllegalArgumentException("request for bot " + r.botId() + " in a batch of bot " + botId);
            }
        }
        return delegate.tryAcquireAll(keyOf(botId), requests.stream().map(this::rekey).toList());
    }

    @Override
    public void penalize(String botId, PenaltyScope scope, String chatId, Duration retryAfter) {
        delegate.penalize(keyOf(botId), scope, chatId, retryAfter);
    }

    /** Under the key: the grant numbers of a re-keyed id are the key's. */
    @Override
    public void reportLateAnswer(String botId, long grantSeq) {
        delegate.reportLateAnswer(keyOf(botId), grantSeq);
    }

    @Override
    public void startDrained(String botId) {
        delegate.startDrained(keyOf(botId));
    }

    @Override
    public String toString() {
        return "LimitKeyBudget{" + keyByBot + " over " + delegate + "}";
    }
}
