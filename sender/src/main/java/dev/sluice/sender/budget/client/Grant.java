package dev.sluice.sender.budget.client;

import java.time.Duration;

/**
 * What {@link BudgetClient#acquire} returns once budget was granted (and consumed).
 *
 * @param waited   time from the call to the grant, by the client's clock
 * @param attempts budget decisions asked for (1 = granted at once)
 */
public record Grant(Duration waited, int attempts) {
}
