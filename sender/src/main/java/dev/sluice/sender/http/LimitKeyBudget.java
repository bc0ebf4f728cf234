package dev.sluice.sender.http;

import dev.sluice.metrics.BudgetState;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.PenaltyScope;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Decides an HTTP provider's budget under its limit key ({@code provider.<id>.limit.key}, e.g.
 * {@code ext:sms-api:prod}) instead of its bot id: a budget belongs to an API key, so every provider entry,
 * sender replica and outside caller that spends that key shares one bucket, one penalty gate and one AIMD
 * rate. Other bot ids pass through unchanged. Owns and closes the delegate.
 */
public final class LimitKeyBudget implements BudgetPort {
    private final BudgetPort delegate;
    private final Map<String, String> keyByBot;

    /**
     * @param keyByBot bot (provider) id → budget key
     */
    public LimitKeyBudget(BudgetPort delegate, Map<String, String> keyByBot) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.keyByBot = Map.copyOf(keyByBot);
    }

    /** {@code budget} deciding providers under their limit keys; {@code budget} itself when none is configured. */
    public static BudgetPort wrap(BudgetPort budget, Map<String, HttpProviderConfig> providers) {
        if (providers.isEmpty()) {
            return budget;
        }
        Map<String, String> keys = new java.util.HashMap<>();
        providers.values().forEach(p -> keys.put(p.id(), p.limitKey()));
        return new LimitKeyBudget(budget, keys);
    }

    /** The budget key of {@code botId}. */
    public String keyOf(String botId) {
        return keyByBot.getOrDefault(botId, botId);
    }

    private BudgetRequest rekey(BudgetRequest r) {
        String key = keyOf(r.botId());
        return key.equals(r.botId()) ? r : new BudgetRequest(key, r.chatId(), r.lane());
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

    @Override
    public BudgetState state() {
        return delegate.state();
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return "LimitKeyBudget{" + keyByBot + " over " + delegate + "}";
    }
}
