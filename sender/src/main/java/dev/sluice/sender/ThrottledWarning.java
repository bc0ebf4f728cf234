package dev.sluice.sender;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * One WARN line for a condition that every message meets while it lasts (e.g. Redis unreachable for the sent-mark
 * read): the first occurrence is logged in full, later ones are counted and logged as one summary line at most every
 * {@code intervalMs} ("... 412 more in the last 10 s"), so an outage costs a bounded number of lines, not one per
 * message. The per-occurrence detail stays at DEBUG.
 *
 * <p>Thread-safe (atomics): any sending thread calls {@link #warn}.
 */
public final class ThrottledWarning {
    private final Logger log;
    private final long intervalMs;
    private final LongSupplier clockMs;
    /** Time of the last line written; {@code Long.MIN_VALUE}: none yet. */
    private final AtomicLong lastLineMs = new AtomicLong(Long.MIN_VALUE);
    private final AtomicLong suppressed = new AtomicLong();

    public ThrottledWarning(Logger log, long intervalMs, LongSupplier clockMs) {
        this.log = log;
        this.intervalMs = intervalMs;
        this.clockMs = clockMs;
    }

    /**
     * Logs {@code text} (already formatted, no secret in it) if no line was written in the interval, with the number
     * of occurrences left out since the last line; else counts it and logs it at DEBUG only.
     */
    public void warn(String text) {
        long now = clockMs.getAsLong();
        long last = lastLineMs.get();
        if ((last == Long.MIN_VALUE || now - last >= intervalMs) && lastLineMs.compareAndSet(last, now)) {
            long more = suppressed.getAndSet(0);
            if (more == 0) {
                log.warn("{}", text);
            } else {
                log.warn("{} ({} more like it in the last {} s, at DEBUG)", text, more,
                        Math.max(1, (now - last) / 1000));
            }
            return;
        }
        suppressed.incrementAndGet();
        log.debug("{}", text);
    }
}
