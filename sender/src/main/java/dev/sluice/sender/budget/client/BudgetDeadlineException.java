package dev.sluice.sender.budget.client;

import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.Limit;
import java.time.Duration;

/**
 * {@link BudgetClient#acquire} gave up: the budget would not grant before the caller's deadline. Nothing
 * was consumed. Retriable later: {@link #retryIn()} is the wait the last refusal named.
 */
public final class BudgetDeadlineException extends RuntimeException {
    private final String key;
    private final Limit limit;
    private final Duration retryIn;
    private final Duration waited;
    private final int attempts;

    BudgetDeadlineException(String key, Decision lastRefusal, Duration deadline, Duration waited, int attempts) {
        super("no budget for key '" + key + "' within " + deadline.toMillis() + " ms: refused by " + lastRefusal.limit()
                + ", next chance in " + lastRefusal.retryIn().toMillis() + " ms (waited " + waited.toMillis() + " ms, "
                + attempts + " attempts)");
        this.key = key;
        this.limit = lastRefusal.limit();
        this.retryIn = lastRefusal.retryIn();
        this.waited = waited;
        this.attempts = attempts;
    }

    /** The budget key (bot id or provider key) asked for. */
    public String key() {
        return key;
    }

    /** The limit that refused last: GLOBAL, CHAT, GROUP, a gate, HEADROOM, UNAVAILABLE or QUOTA. */
    public Limit limit() {
        return limit;
    }

    /** The wait the last refusal named, counted from that refusal. */
    public Duration retryIn() {
        return retryIn;
    }

    /** How long the call waited before giving up. */
    public Duration waited() {
        return waited;
    }

    /** Budget decisions asked for. */
    public int attempts() {
        return attempts;
    }
}
