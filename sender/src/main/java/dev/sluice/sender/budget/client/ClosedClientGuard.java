package dev.sluice.sender.budget.client;

import dev.sluice.metrics.BudgetState;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.BudgetUnavailableException;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.PenaltyScope;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

/**
 * Wraps the Redis budget inside {@link dev.sluice.sender.budget.ResilientBudget} for a client with many
 * threads: when one thread's connection error makes ResilientBudget close the Redis client, other threads
 * still inside a call of that client get Netty's {@code IllegalStateException("cannot be started once
 * stopped")} or a rejected task instead of a Redis error. Those are the same outage, so they become
 * {@link BudgetUnavailableException} and the outage mode decides, instead of failing the caller.
 */
final class ClosedClientGuard implements BudgetPort {
    private final BudgetPort redis;

    ClosedClientGuard(BudgetPort redis) {
        this.redis = redis;
    }

    @Override
    public Decision tryAcquire(BudgetRequest request) {
        try {
            return redis.tryAcquire(request);
        } catch (IllegalStateException | RejectedExecutionException e) {
            throw closed(e);
        }
    }

    @Override
    public List<Decision> tryAcquireAll(String botId, List<BudgetRequest> requests) {
        try {
            return redis.tryAcquireAll(botId, requests);
        } catch (IllegalStateException | RejectedExecutionException e) {
            throw closed(e);
        }
    }

    @Override
    public void penalize(String botId, PenaltyScope scope, String chatId, Duration retryAfter) {
        try {
            redis.penalize(botId, scope, chatId, retryAfter);
        } catch (IllegalStateException | RejectedExecutionException e) {
            throw closed(e);
        }
    }

    private static BudgetUnavailableException closed(RuntimeException e) {
        return new BudgetUnavailableException("Redis client closed during the call after a connection error: "
                + e.getMessage(), e);
    }

    @Override
    public BudgetState state() {
        return redis.state();
    }

    @Override
    public void close() {
        redis.close();
    }
}
