package dev.sluice.limits;

/**
 * The answer to one request.
 *
 * @param allowed    whether the request was admitted (and counted)
 * @param waitMillis 0 when allowed; otherwise the smallest whole number of milliseconds after which
 *                   the same request would be admitted if nothing else is admitted meanwhile
 *                   (rounded up, so retrying exactly {@code waitMillis} later succeeds; this is the
 *                   {@code retry_after} to hand out, in ms)
 */
public record Decision(boolean allowed, long waitMillis) {

    private static final Decision ALLOW = new Decision(true, 0L);

    public Decision {
        if (allowed ? waitMillis != 0 : waitMillis < 1) {
            throw new IllegalArgumentException("allowed=" + allowed + " with waitMillis=" + waitMillis);
        }
    }

    public static Decision allow() {
        return ALLOW;
    }

    public static Decision refuse(long waitMillis) {
        return new Decision(false, waitMillis);
    }
}
