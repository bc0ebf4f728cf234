/**
 * The shared budget for Java callers outside the pipeline: {@link dev.sluice.sender.budget.client.BudgetClient}
 * ({@code tryAcquire} refuses at once with the wait, {@code acquire} waits with a deadline) on the senders'
 * Redis script and keys.
 */
package dev.sluice.sender.budget.client;
