package dev.sluice.sender.budget.client;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * How {@link BudgetClient#acquire} waits out a refusal: once per refusal, for exactly the wait the budget
 * returned (never a polling loop). Tests inject one that advances a manual clock instead of sleeping.
 */
@FunctionalInterface
public interface Sleeper {
    /** Parks the calling thread with {@link TimeUnit#sleep}. */
    Sleeper SYSTEM = d -> TimeUnit.NANOSECONDS.sleep(d.toNanos());

    /**
     * @param duration how long to wait, &gt; 0
     * @throws InterruptedException if the thread is interrupted while waiting
     */
    void sleep(Duration duration) throws InterruptedException;
}
