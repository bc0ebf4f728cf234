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
 * <p>A request that allowed a reservation ({@link BudgetRequest#reserveUpTo()}) may be granted for a later
 * instant: {@code granted} with a positive {@code retryIn}; the budget is consumed for that instant and the
 * message must not be sent before {@code retryIn} has passed (later is safe).
 *
 * @param granted         whether one message may be sent (budget was consumed): now, or after {@code retryIn}
 * @param retryIn         when refused, how long until the request can pass; when granted, how long until it may
 *                        be sent ({@link Duration#ZERO}: now; positive only for reservations); zero when already sent
 * @param limit           the limit that refused, {@link Limit#NONE} when granted
 * @param sentMarkChecked whether the budget read the message's sent mark in the same decision
 * @param sentMark        the stored sent mark when {@code limit} is {@link Limit#ALREADY_SENT}, else null
 * @param grantSeq        with the arrival guard on ({@link BudgetConfig#arrivalGuardLimitPerS()}), the bot's grant
 *                        sequence number of this grant, for {@link BudgetPort#reportLateAnswer}; else -1
 * @param inFlightMarked  whether this grant wrote the message's in-flight mark ({@link BudgetRequest#inFlight()}) in
 *                        the same call: then its later sent-mark writes may ride on later calls
 */
public record Decision(boolean granted, Duration retryIn, Limit limit, boolean sentMarkChecked, String sentMark,
                       long grantSeq, boolean inFlightMarked) {
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
        if (inFlightMarked && !granted) {
            throw new IllegalArgumentException("an in-flight mark comes only with a grant");
        }
        if (grantSeq != -1 && (!granted || grantSeq < 1)) {
            throw new IllegalArgumentException("a grant sequence number comes only with a grant, >= 1, got " + grantSeq);
        }
    }

    public Decision(boolean granted, Duration retryIn, Limit limit, boolean sentMarkChecked, String sentMark) {
        this(granted, retryIn, limit, sentMarkChecked, sentMark, -1);
    }

    public Decision(boolean granted, Duration retryIn, Limit limit, boolean sentMarkChecked, String sentMark,
                    long grantSeq) {
        this(granted, retryIn, limit, sentMarkChecked, sentMark, grantSeq, false);
    }

    /** This grant, which also wrote the message's in-flight mark. */
    public Decision withInFlightMarked() {
        return new Decision(granted, retryIn, limit, sentMarkChecked, sentMark, grantSeq, true);
    }

    /** A decision that did not look at sent marks. */
    public Decision(boolean granted, Duration retryIn, Limit limit) {
        this(granted, retryIn, limit, false, null);
    }

    public static Decision grant() {
        return GRANTED;
    }

    /** Granted for the instant {@code sendInMillis} from now (a reservation): send not before then. */
    public static Decision reserved(long sendInMillis) {
        return new Decision(true, Duration.ofMillis(sendInMillis), Limit.NONE);
    }

    /** Whether this grant is for a later instant (a reservation): see {@link #retryIn()}. */
    public boolean isReservation() {
        return granted && !retryIn.isZero();
    }

    public static Decision refused(long waitMillis, Limit limit) {
        return new Decision(false, Duration.ofMillis(waitMillis), limit);
    }

    /** The message was already sent: its mark's stored value (see {@code RedisSentMarks}). */
    public static Decision alreadySent(String mark) {
        return new Decision(false, Duration.ZERO, Limit.ALREADY_SENT, true, mark);
    }

    /** This grant, numbered {@code seq} by the arrival guard. */
    public Decision withGrantSeq(long seq) {
        return new Decision(granted, retryIn, limit, sentMarkChecked, sentMark, seq, inFlightMarked);
    }

    /** This decision, also saying that the message's sent mark was read and absent. */
    public Decision withSentMarkChecked() {
        if (sentMarkChecked) {
            return this;
        }
        if (granted) {
            return retryIn.isZero() && grantSeq == -1 && !inFlightMarked ? GRANTED_CHECKED
                    : new Decision(true, retryIn, limit, true, null, grantSeq, inFlightMarked);
        }
        return new Decision(false, retryIn, limit, true, null);
    }
}
