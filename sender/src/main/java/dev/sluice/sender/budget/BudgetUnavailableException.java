package dev.sluice.sender.budget;

/** The budget store (Redis) could not decide: timeout, connection loss. Retriable. */
public final class BudgetUnavailableException extends RuntimeException {
    public BudgetUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
