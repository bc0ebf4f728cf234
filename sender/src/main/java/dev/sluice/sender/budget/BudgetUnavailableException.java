package dev.sluice.sender.budget;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;

/** The budget store (Redis) could not decide: timeout, connection loss, script error. Retriable. */
public final class BudgetUnavailableException extends RuntimeException {
    private final String kind;

    public BudgetUnavailableException(String message, Throwable cause) {
        super(message, cause);
        this.kind = kindOf(cause);
    }

    /**
     * The error kind as the metric {@code sluice.redis.errors{kind}} names it: {@code timeout},
     * {@code connection}, {@code script} or {@code other}.
     */
    public String kind() {
        return kind;
    }

    static String kindOf(Throwable cause) {
        for (Throwable c = cause; c != null; c = c.getCause()) {
            if (c instanceof RedisCommandTimeoutException || c instanceof java.util.concurrent.TimeoutException) {
                return "timeout";
            }
            if (c instanceof RedisConnectionException || c instanceof java.io.IOException
                    || (c.getMessage() != null && (c.getMessage().contains("Connection closed")
                    || c.getMessage().contains("not connected") || c.getMessage().contains("Currently not connected")))) {
                return "connection";
            }
            if (c instanceof RedisCommandExecutionException) {
                return "script";
            }
        }
        return "other";
    }
}
