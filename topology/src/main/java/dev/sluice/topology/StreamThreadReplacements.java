package dev.sluice.topology;

import java.time.Clock;
import java.util.ArrayDeque;
import java.util.Deque;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The topology's uncaught-exception policy (F9): a failed stream thread is replaced at most
 * {@code stream.thread.replacements.max} times within {@code stream.thread.replacements.window.ms}; the next
 * failure in that window shuts the Kafka Streams client down ({@code SHUTDOWN_CLIENT}: state ERROR, so
 * {@code /health/live} and {@code /health/ready} answer 503 and an orchestrator restarts or pages). A transient
 * cause (a registry outage longer than its retries, a broker failover) is survived by a replacement; a
 * deterministic one (a permanent registry error on register, a missing sink topic) no longer reprocesses the
 * same record forever.
 *
 * <p>Called on the failing stream thread; the replacement times are guarded by this object's monitor.
 */
public final class StreamThreadReplacements implements StreamsUncaughtExceptionHandler {
    private static final Logger log = LoggerFactory.getLogger(StreamThreadReplacements.class);

    private final int max;
    private final long windowMs;
    private final Clock clock;
    private final java.util.function.Consumer<Boolean> onFailure;
    private final Deque<Long> replacedAtMs = new ArrayDeque<>();
    private long replacements;

    /**
     * @param max       replacements allowed within the window (0: the first failure shuts the client down)
     * @param windowMs  sliding window, ms
     * @param onFailure told about each failure, true when the thread is replaced (a metric); must be fast
     */
    public StreamThreadReplacements(int max, long windowMs, Clock clock, java.util.function.Consumer<Boolean> onFailure) {
        this.max = max;
        this.windowMs = windowMs;
        this.clock = clock;
        this.onFailure = onFailure;
    }

    @Override
    public StreamThreadExceptionResponse handle(Throwable exception) {
        long now = clock.millis();
        boolean replace;
        int inWindow;
        synchronized (this) {
            while (!replacedAtMs.isEmpty() && replacedAtMs.peekFirst() <= now - windowMs) {
                replacedAtMs.pollFirst();
            }
            inWindow = replacedAtMs.size();
            replace = inWindow < max;
            if (replace) {
                replacedAtMs.addLast(now);
                replacements++;
            }
        }
        if (replace) {
            log.error("stream thread failed; replacing it ({} of {} replacements within stream.thread.replacements.window.ms={})",
                    inWindow + 1, max, windowMs, exception);
            onFailure.accept(true);
            return StreamThreadExceptionResponse.REPLACE_THREAD;
        }
        log.error("stream thread failed after {} replacements within stream.thread.replacements.window.ms={} "
                + "(stream.thread.replacements.max={}): shutting the Kafka Streams client down; the process reports not live and not ready",
                inWindow, windowMs, max, exception);
        onFailure.accept(false);
        return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
    }

    /** Replacements made since start. */
    public synchronized long replacements() {
        return replacements;
    }
}
