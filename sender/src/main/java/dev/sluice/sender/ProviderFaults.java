package dev.sluice.sender;

import dev.sluice.config.TokenRedaction;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * What the log says while a bot's provider calls fail transiently (5xx, connection errors, timeouts): an outage or a
 * 5xx storm otherwise only moves {@code sluice_provider_requests_total{outcome="server_error"|"network_error"}}.
 * Per bot, bounded whatever the number of calls:
 * <ul>
 *   <li>one WARN at the fault's first failure (the first after an answer): the bot id, the kind ({@code HTTP 502},
 *       {@code connection error}, {@code connect timeout}, {@code timeout}, {@code no answer}) and the provider's
 *       description;</li>
 *   <li>while it lasts, at most one WARN summary per interval (failed calls by kind and the calls that succeeded in
 *       that interval, the last description), written by a call of the bot after the interval has passed;</li>
 *   <li>one INFO when an answer comes at least one quiet interval after the fault's last failure: how long it lasted
 *       (first to last failure) and how many calls failed, by kind. An answer sooner, as in a storm of 50 % 502s, is
 *       only counted: a fault that flaps ends once, not at every success;</li>
 *   <li>a message given up ({@code FAILED} after {@code sender.max.attempts}) through one {@link ThrottledWarning}
 *       for all bots: the first in full, then at most one line per interval with the count of the others.</li>
 * </ul>
 * An "answer" is any outcome but a transient failure (also a 429 or a 4xx): the provider works, as
 * {@link ProviderBreakers} counts it. Texts pass {@link TokenRedaction} again (the transports already redact the
 * bot's token): no token reaches the log.
 *
 * <p>Thread-safe: several sending threads ({@code sluice-sender-send-*}) call it for one bot at once. Each bot's state
 * is an object of its own (one per configured bot id, kept) whose fields are read and written under its monitor; an
 * answer of a bot not in a fault reads one volatile flag and takes no lock.
 */
final class ProviderFaults {
    /** Summary interval and quiet time before a fault counts as over. */
    static final long INTERVAL_MS = 10_000;

    private final Logger log;
    private final long intervalMs;
    private final ConcurrentMap<String, BotFault> byBot = new ConcurrentHashMap<>();
    private final ThrottledWarning gaveUp;

    ProviderFaults(Logger log, long intervalMs, LongSupplier clockMs) {
        this.log = log;
        this.intervalMs = intervalMs;
        this.gaveUp = new ThrottledWarning(log, intervalMs, clockMs);
    }

    /** One fault's counts; guarded by its own monitor, except {@link #active} (written under it, read without). */
    private static final class BotFault {
        volatile boolean active;
        long sinceMs;
        long lastFailureMs;
        long lastLineMs;
        long failed;
        long succeeded;
        final Map<String, Long> failedByKind = new LinkedHashMap<>();
        long intervalFailed;
        long intervalSucceeded;
        final Map<String, Long> intervalByKind = new LinkedHashMap<>();
        String lastDescription;
    }

    /** The kind of a transient failure as the log names it. */
    static String kind(Integer errorCode, String description, boolean maybeDelivered) {
        if (errorCode != null) {
            return "HTTP " + errorCode;
        }
        String d = description == null ? "" : description.toLowerCase(Locale.ROOT);
        if (d.contains("timed out") || d.contains("timeout")) {
            return d.contains("connect") && !maybeDelivered ? "connect timeout" : "timeout";
        }
        return maybeDelivered ? "no answer" : "connection error";
    }

    /** A provider call of {@code bot} ended in a transient failure at {@code nowMs}. */
    void failed(String bot, Integer errorCode, String description, boolean maybeDelivered, long nowMs) {
        String kind = kind(errorCode, description, maybeDelivered);
        String text = TokenRedaction.redact(description);
        BotFault f = byBot.computeIfAbsent(bot, b -> new BotFault());
        synchronized (f) {
            boolean starts = !f.active;
            if (starts) { // a new fault: the previous one's counts go
                f.active = true;
                f.sinceMs = nowMs;
                f.lastLineMs = nowMs;
                f.failed = 0;
                f.succeeded = 0;
                f.failedByKind.clear();
                f.intervalSucceeded = 0;
                f.intervalByKind.clear();
            }
            f.lastFailureMs = nowMs;
            f.lastDescription = text;
            f.failed++;
            f.failedByKind.merge(kind, 1L, Long::sum);
            if (starts) {
                f.intervalFailed = 0; // the start line reports this failure; summaries count the ones after it
                log.warn("provider calls of bot {} fail: {} ({}); messages are retried with backoff, a summary "
                        + "follows at most every {} s until calls succeed again", bot, kind, text, intervalMs / 1000);
                return;
            }
            f.intervalFailed++;
            f.intervalByKind.merge(kind, 1L, Long::sum);
            summaryIfDue(bot, f, nowMs);
        }
    }

    /** A provider call of {@code bot} was answered (any outcome but a transient failure) at {@code nowMs}. */
    void answered(String bot, long nowMs) {
        BotFault f = byBot.get(bot);
        if (f == null || !f.active) {
            return;
        }
        synchronized (f) {
            if (!f.active) {
                return;
            }
            if (nowMs - f.lastFailureMs < intervalMs) {
                f.succeeded++;
                f.intervalSucceeded++;
                summaryIfDue(bot, f, nowMs);
                return;
            }
            f.active = false;
            log.info("provider calls of bot {} succeed again: they failed for {} s, {} calls failed ({}), {} succeeded "
                    + "meanwhile; last failure: {}", bot, seconds(f.lastFailureMs - f.sinceMs), f.failed,
                    byKind(f.failedByKind), f.succeeded, f.lastDescription);
        }
    }

    /**
     * A message of {@code bot} given up after its transient failures ({@code FAILED}); {@code reason} is its result's
     * error text.
     */
    void gaveUp(String bot, String messageId, String reason) {
        gaveUp.warn("message " + messageId + " of bot " + bot + " FAILED: " + TokenRedaction.redact(reason));
    }

    private void summaryIfDue(String bot, BotFault f, long nowMs) {
        if (nowMs - f.lastLineMs < intervalMs || f.intervalFailed == 0) {
            return;
        }
        log.warn("provider calls of bot {} still fail (for {} s): in the last {} s {} failed ({}), {} succeeded; "
                + "last: {}", bot, seconds(nowMs - f.sinceMs), seconds(nowMs - f.lastLineMs), f.intervalFailed,
                byKind(f.intervalByKind), f.intervalSucceeded, f.lastDescription);
        f.lastLineMs = nowMs;
        f.intervalFailed = 0;
        f.intervalSucceeded = 0;
        f.intervalByKind.clear();
    }

    private static long seconds(long ms) {
        return Math.max(0, ms) / 1000;
    }

    private static String byKind(Map<String, Long> counts) {
        StringBuilder b = new StringBuilder();
        counts.forEach((k, n) -> b.append(b.length() == 0 ? "" : ", ").append(k).append(": ").append(n));
        return b.toString();
    }
}
