package dev.sluice.sender.budget;

import java.time.Duration;

/**
 * The answer of one budget request: granted, or refused with the time to wait and the limit that refused.
 * The wait is rounded up to whole milliseconds, so a caller that retries after exactly {@code retryIn} is
 * admitted (unless someone else took the budget meanwhile).
 *
 * @param granted whether one message may be sent now (budget was consumed)
 * @param retryIn when refused, how long until the request can pass; {@link Duration#ZERO} when granted
 * @param limit   the limit that refused, {@link Limit#NONE} when granted
 */
public record Decision(boolean granted, Duration retryIn, Limit limit) {
    private static final Decision GRANTED = new Decision(true, Duration.ZERO, Limit.NONE);

    public Decision {
        if (granted != (limit == Limit.NONE)) {
            throw new IllegalArgumentException("granted=" + granted + " with limit " + limit);
        }
        if (retryIn.isNegative() || (!granted && retryIn.isZero())) {
            throw new IllegalArgumentException("refusal needs a positive wait, got " + retryIn);
        }
    }

    public static Decision grant() {
        return GRANTED;
    }

    public static Decision refused(long waitMillis, Limit limit) {
        return new Decision(false, Duration.ofMillis(waitMillis), limit);
    }
}
