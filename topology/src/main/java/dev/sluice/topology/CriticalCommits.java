package dev.sluice.topology;

import org.apache.kafka.streams.processor.api.ProcessorContext;

/**
 * Closes the exactly-once transaction that carries a CRITICAL outbox record early (issue 21): under
 * {@code exactly_once_v2} an outbox record is visible to the senders (read_committed) only when the stream thread
 * commits, every {@code commit.interval.ms} (100 ms by default) plus the commit itself. After a CRITICAL record was
 * forwarded, {@link #critical} asks Kafka Streams for a commit ({@link ProcessorContext#commit()}: the thread commits
 * all its tasks after the current processing round) instead of waiting for the interval, at most once per
 * {@code critical.commit.interval.ms} per stream thread, so a burst of CRITICAL records costs a bounded number of
 * extra transactions. A CRITICAL record that comes sooner is marked pending, and the processor's next record
 * ({@link #nextRecord}) asks once the spacing has passed; the regular commit covers it if it comes first (so a pending
 * one waits at most {@code commit.interval.ms}, as before). No punctuator: Kafka Streams halves the records it
 * processes per loop after every loop that ran one, so a frequent punctuator would cost throughput. Nothing else
 * changes: the same records in the same order, each exactly once; a transaction only ends sooner (and holds less).
 *
 * <p>One instance per processor (task and lane), used by that task's stream thread only; the time of the last
 * request is per stream thread (a {@link ThreadLocal}), since one commit closes the transaction of all the thread's
 * tasks.
 */
final class CriticalCommits {
    /** Per stream thread: wall-clock ms of the last commit request by any processor on it. */
    private static final ThreadLocal<long[]> LAST_REQUEST_MS = ThreadLocal.withInitial(() -> new long[] {Long.MIN_VALUE / 2});

    private final long minSpacingMs;
    private boolean pending;
    private long requests;

    /** {@code minSpacingMs} 0: never ask (the transaction closes at {@code commit.interval.ms}). */
    CriticalCommits(long minSpacingMs) {
        if (minSpacingMs < 0) {
            throw new IllegalArgumentException("minSpacingMs must be >= 0, was " + minSpacingMs);
        }
        this.minSpacingMs = minSpacingMs;
    }

    boolean enabled() {
        return minSpacingMs > 0;
    }

    long minSpacingMs() {
        return minSpacingMs;
    }

    /** A CRITICAL record was forwarded to the outbox at {@code nowMs}: ask for a commit now, or mark it pending. */
    void critical(ProcessorContext<?, ?> context, long nowMs) {
        if (!enabled()) {
            return;
        }
        pending = true;
        maybeRequest(context, nowMs);
    }

    /** Before the processor's next record: asks for the commit a CRITICAL record marked pending while the spacing held it back. */
    void nextRecord(ProcessorContext<?, ?> context, long nowMs) {
        if (pending) {
            maybeRequest(context, nowMs);
        }
    }

    /** Commit requests made by this instance (tests, counters). */
    long requests() {
        return requests;
    }

    private void maybeRequest(ProcessorContext<?, ?> context, long nowMs) {
        long[] last = LAST_REQUEST_MS.get();
        long since = nowMs - last[0];
        if (since >= 0 && since < minSpacingMs) {
            return; // a wall clock that went back (or another test driver's clock) does not hold requests back
        }
        last[0] = nowMs;
        pending = false;
        requests++;
        context.commit();
    }
}
