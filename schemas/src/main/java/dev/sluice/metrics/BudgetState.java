package dev.sluice.metrics;

/**
 * How a sender instance currently decides its budget (DESIGN.md, Budget): the effective state at run time, not the configured {@code budget.mode}.
 * <ul>
 *   <li>{@link #SHARED}: the Redis Lua script decides for every replica (normal).</li>
 *   <li>{@link #LOCAL}: configured {@code budget.mode=local}: an in-process limiter (demo, single replica).</li>
 *   <li>{@link #FALLBACK_LOCAL}: Redis is unavailable (circuit open); a local GCRA at rate / max replicas.</li>
 *   <li>{@link #PAUSED}: Redis is unavailable and the fallback is fail-closed: nothing is sent.</li>
 * </ul>
 */
public enum BudgetState {
    SHARED, LOCAL, FALLBACK_LOCAL, PAUSED;

    /** Whether an instance in this mode is sending (a readiness condition). */
    public boolean sending() {
        return this != PAUSED;
    }
}
