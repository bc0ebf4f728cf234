package dev.sluice.sender.budget;

import dev.sluice.metrics.BudgetState;
import dev.sluice.metrics.SenderMetrics;
import java.util.Objects;

/**
 * What {@link ResilientBudget} reports: Redis errors by kind and changes of the budget state. The sender
 * wires it to its metrics with {@link #of(SenderMetrics)} ({@code sluice.redis.errors{kind}},
 * {@code sluice.budget.mode}, {@code sluice.budget.mode.time}).
 */
public interface BudgetListener {
    /** Reports nothing. */
    BudgetListener NONE = new BudgetListener() {
        @Override
        public void redisError(String kind) {
        }

        @Override
        public void stateChanged(BudgetState state) {
        }
    };

    /** A Redis call of the budget failed; kind is {@code timeout}, {@code connection}, {@code script} or {@code other}. */
    void redisError(String kind);

    /** The budget now decides in this state (called on changes only, from the deciding thread). */
    void stateChanged(BudgetState state);

    /** Forwards to the sender metrics. */
    static BudgetListener of(SenderMetrics metrics) {
        Objects.requireNonNull(metrics, "metrics");
        return new BudgetListener() {
            @Override
            public void redisError(String kind) {
                metrics.redisError(kind);
            }

            @Override
            public void stateChanged(BudgetState state) {
                metrics.budgetState(state);
            }
        };
    }
}
