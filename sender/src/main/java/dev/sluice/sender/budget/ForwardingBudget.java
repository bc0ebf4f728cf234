package dev.sluice.sender.budget;

import dev.sluice.metrics.BudgetState;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Base of every budget decorator ({@link LimitKeyBudget}, {@code QuotaBudget}): each {@link BudgetPort} method,
 * the capabilities included (reservations, the late-answer report of the arrival guard, the drained start, the
 * folded sent-mark check, the Redis round-trip count, the idle probe), goes to the delegate unless the subclass overrides it. A
 * decorator therefore never turns a capability off by inheriting a {@link BudgetPort} default (finding F7); one
 * that cannot keep a capability overrides it and says why in its Javadoc.
 *
 * <p>Holds no state of its own; thread-safe when the delegate is. Owns the delegate: {@link #close()} closes it.
 */
public abstract class ForwardingBudget implements BudgetPort {
    /** The budget decorated; closed with this one. */
    protected final BudgetPort delegate;

    protected ForwardingBudget(BudgetPort delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    @Override
    public Decision tryAcquire(BudgetRequest request) {
        return delegate.tryAcquire(request);
    }

    @Override
    public List<Decision> tryAcquireAll(String botId, List<BudgetRequest> requests) {
        return delegate.tryAcquireAll(botId, requests);
    }

    @Override
    public void penalize(String botId, PenaltyScope scope, String chatId, Duration retryAfter) {
        delegate.penalize(botId, scope, chatId, retryAfter);
    }

    @Override
    public void reportLateAnswer(String botId, long grantSeq) {
        delegate.reportLateAnswer(botId, grantSeq);
    }

    @Override
    public BudgetState state() {
        return delegate.state();
    }

    @Override
    public Optional<String> sentMarksRedisUrl() {
        return delegate.sentMarksRedisUrl();
    }

    @Override
    public void startDrained(String botId) {
        delegate.startDrained(botId);
    }

    @Override
    public boolean reserves() {
        return delegate.reserves();
    }

    @Override
    public boolean foldMarkWrites(MarkWrites writes) {
        return delegate.foldMarkWrites(writes);
    }

    @Override
    public boolean routineHorizonShort(String botId) {
        return delegate.routineHorizonShort(botId);
    }

    @Override
    public long redisRoundTrips() {
        return delegate.redisRoundTrips();
    }

    @Override
    public void probe() {
        delegate.probe();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
