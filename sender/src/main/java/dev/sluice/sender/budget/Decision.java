package dev.sluice.sender.budget;

import java.time.Duration;

/**
 * The answer of one budget request: granted, or refused with the time to wait and the limit that refused.
 * The wait is rounded up to whole milliseconds, so a caller that retries after exactly {@code retryIn} is
 * admitted (unless someone else took the budget meanwhile).
 *
 * <p>A request that named a message ({@link BudgetRequest#sentMarkId()}) to a budget that can read the sent
 * marks ({@link BudgetPort#sentMarksRedisUrl()}) also learns whether the message was already sent: then
 * {@code sentMarkChecked} is true, and a message found marked is answered {@link Limit#ALREADY_SENT} with the
 * mark's stored value in {@code sentMark} (nothing consumed, no wait).
 *
 * @param granted         whether one message may be sent now (budget was consumed)
 * @param retryIn         when refused, how long until the request can pass; {@link Duration#ZERO} when granted
 *                        or already sent
 * @param limit           the limit that refused, {@link Limit#NONE} when granted
 * @param sentMarkChecked whether the budget read the message's sent mark in the same decision
 * @param sentMark        the stored sent mark when {@code limit} is {@link Limit#ALREADY_SENT}, else null
 */
public record Decision(boolean granted, Duration retryIn, Limit limit, boolean sentMarkChecked, String sentMark) {
    private static final Decision GRANTED = new Decision(true, Duration.ZERO, Limit.NONE);
    private static final Decision GRANTED_CHECKED = new Decision(true, Duration.ZERO, Limit.NONE, true, null);

    public Decision {
        if (granted != (limit == Limit.NONE)) {
            throw new IllegalArgumentException("granted=" + granted + " with limit " + limit);
        }
        boolean alreadySent = limit == Limit.ALREADY_SENT;
        if (retryIn.isNegative() || (!granted && !alreadySent && retryIn.isZero())) {
            throw new IllegalArgumentException("refusal needs a positive wait, got " + retryIn);
        }
        if (alreadySent != (sentMark != null) || (alreadySent && !sentMarkChecked)) {
            throw new IllegalArgumentException("a sent mark comes exactly with ALREADY_SENT, got " + limit);
        }
    }

    /** A decision that did not look at sent marks. */
    public Decision(boolean granted, Duration retryIn, Limit limit) {
        this(granted, retryIn, limit, false, null);
    }

    public static Decision grant() {
        return GRANTED;
    }

    public static Decision refused(long waitMillis, Limit limit) {
        return new Decision(false, Duration.ofMillis(waitMillis), limit);
    }

    /** The message was already sent: its mark's stored value (see {@code RedisSentMarks}). */
    public static Decision alreadySent(String mark) {
        return new Decision(false, Duration.ZERO, Limit.ALREADY_SENT, true, mark);
    }

    /** This decision, also saying that the message's sent mark was read and absent. */
    public Decision withSentMarkChecked() {
        if (sentMarkChecked) {
            return this;
        }
        return granted ? GRANTED_CHECKED : new Decision(false, retryIn, limit, true, null);
    }
}
