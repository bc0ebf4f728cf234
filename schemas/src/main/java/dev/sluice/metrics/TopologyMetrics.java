package dev.sluice.metrics;

import dev.sluice.avro.Lane;
import dev.sluice.avro.NotificationClass;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;

/**
 * The metrics of one topology instance (names in {@link SluiceMetrics}). Processors receive it from
 * the topology factory and call the event methods; under exactly_once_v2 a task that is retried may
 * count an event twice (counters are operational signals, the results topic is the ledger).
 *
 * <p>Each digest store registers its size supplier per task ({@link #digestStore}) and unregisters on
 * processor close, so a migrated task leaves no stale value behind.
 */
public final class TopologyMetrics implements MeterBinder {
    private static final Pattern REASON = Pattern.compile("[a-z0-9_]{1,40}");

    private volatile MeterRegistry registry;
    private final Map<NotificationClass, Counter> folded = new ConcurrentHashMap<>();
    private final Map<NotificationClass, Counter> expired = new ConcurrentHashMap<>();
    private final Map<String, Counter> outbound = new ConcurrentHashMap<>();
    private final Map<String, Counter> digests = new ConcurrentHashMap<>();
    private final Map<String, Counter> skipped = new ConcurrentHashMap<>();
    private final Map<String, Counter> dlq = new ConcurrentHashMap<>();
    private final Map<String, LongSupplier> digestStores = new ConcurrentHashMap<>();
    private final Map<Lane, Counter> duplicates = new ConcurrentHashMap<>();
    private final Map<Boolean, Counter> threadFailures = new ConcurrentHashMap<>();

    /** Creates and binds in one step. */
    public static TopologyMetrics bind(MeterRegistry registry) {
        TopologyMetrics m = new TopologyMetrics();
        m.bindTo(registry);
        return m;
    }

    @Override
    public synchronized void bindTo(MeterRegistry r) {
        if (registry != null) {
            throw new IllegalStateException("TopologyMetrics is already bound to a registry");
        }
        for (NotificationClass c : NotificationClass.values()) {
            folded.put(c, Counter.builder(SluiceMetrics.TOPOLOGY_FOLDED).tag(SluiceMetrics.TAG_CLASS, c.name())
                    .description("Notifications folded into the digest store").register(r));
            expired.put(c, Counter.builder(SluiceMetrics.TOPOLOGY_EXPIRED).tag(SluiceMetrics.TAG_CLASS, c.name())
                    .description("Notifications expired in the topology (past expires_at)").register(r));
            for (Lane lane : Lane.values()) {
                duplicates.computeIfAbsent(lane, l -> Counter.builder(SluiceMetrics.TOPOLOGY_DUPLICATES)
                        .tag(SluiceMetrics.TAG_LANE, SluiceMetrics.tagValue(l))
                        .description("Notifications dropped as duplicates (id seen within dedupe.window.ms)").register(r));
                outbound.put(lane + "/" + c, Counter.builder(SluiceMetrics.TOPOLOGY_OUTBOUND)
                        .tag(SluiceMetrics.TAG_LANE, SluiceMetrics.tagValue(lane)).tag(SluiceMetrics.TAG_CLASS, c.name())
                        .description("Outbound messages written to the outboxes").register(r));
            }
        }
        for (boolean replaced : new boolean[] {true, false}) {
            threadFailures.put(replaced, Counter.builder(SluiceMetrics.TOPOLOGY_STREAM_THREAD_FAILURES)
                    .tag(SluiceMetrics.TAG_RESPONSE, replaced ? "replace_thread" : "shutdown_client")
                    .description("Failed stream threads: replaced, or the client shut down (stream.thread.replacements.max reached)")
                    .register(r));
        }
        registry = r;
        // The reasons every deployment has, so their series exist at 0 from the start.
        digests("interval");
        digests("max_keys");
        digests("max_folded_ids");
        skippedCounter("inactive");
        dlqCounter("invalid_record");
        dlqCounter("missing_chat_id");
        Gauge.builder(SluiceMetrics.TOPOLOGY_DIGEST_STORE_SIZE, this, TopologyMetrics::digestStoreSize)
                .description("Keys pending in the digest stores of this instance").register(r);
    }

    /** A notification was folded into the digest store. */
    public void folded(NotificationClass notificationClass) {
        bound();
        folded.get(notificationClass).increment();
    }

    /** A digest message was emitted; {@code reason} is {@code interval}, {@code max_keys} or {@code max_folded_ids}. */
    public void digestEmitted(String reason) {
        bound();
        digests(reason).increment();
    }

    /** A notification ended as EXPIRED in the topology. */
    public void expired(NotificationClass notificationClass) {
        bound();
        expired.get(notificationClass).increment();
    }

    /** A notification ended without sending; {@code reason} e.g. {@code inactive}. */
    public void skipped(String reason) {
        bound();
        skippedCounter(reason).increment();
    }

    /** A record went to the dead-letter topic; {@code reasonCode} a short code such as {@code invalid_record}. */
    public void deadLettered(String reasonCode) {
        bound();
        dlqCounter(reasonCode).increment();
    }

    /** A notification was dropped as a duplicate in {@code lane}. */
    public void duplicate(Lane lane) {
        bound();
        duplicates.get(lane).increment();
    }

    /** A stream thread failed; {@code replaced}: it was replaced, else the client shut down. */
    public void streamThreadFailed(boolean replaced) {
        bound();
        threadFailures.get(replaced).increment();
    }

    /** An outbound message was written to the outbox of {@code lane}. */
    public void outbound(Lane lane, NotificationClass notificationClass) {
        bound();
        outbound.get(lane + "/" + notificationClass).increment();
    }

    /** Registers the size of one task's digest store (e.g. {@code store::approximateNumEntries}). */
    public void digestStore(String taskId, LongSupplier approximateEntries) {
        digestStores.put(Objects.requireNonNull(taskId), Objects.requireNonNull(approximateEntries));
    }

    /** Forgets a task's digest store (call from the processor's close()). */
    public void removeDigestStore(String taskId) {
        digestStores.remove(taskId);
    }

    double digestStoreSize() {
        long total = 0;
        for (LongSupplier s : digestStores.values()) {
            try {
                total += s.getAsLong();
            } catch (RuntimeException closedStore) {
                // A store being closed during a rebalance: count it as empty rather than fail the scrape.
            }
        }
        return total;
    }

    private Counter digests(String reason) {
        return digests.computeIfAbsent(reason(reason), r -> Counter.builder(SluiceMetrics.TOPOLOGY_DIGESTS)
                .tag(SluiceMetrics.TAG_REASON, r).description("Digest messages emitted").register(registry));
    }

    private Counter skippedCounter(String reason) {
        return skipped.computeIfAbsent(reason(reason), r -> Counter.builder(SluiceMetrics.TOPOLOGY_SKIPPED)
                .tag(SluiceMetrics.TAG_REASON, r).description("Notifications ended without sending").register(registry));
    }

    private Counter dlqCounter(String reason) {
        return dlq.computeIfAbsent(reason(reason), r -> Counter.builder(SluiceMetrics.TOPOLOGY_DLQ)
                .tag(SluiceMetrics.TAG_REASON, r).description("Records sent to the dead-letter topic").register(registry));
    }

    /** Tags must stay bounded: a reason is a short lower-case code, never an error message. */
    private static String reason(String reason) {
        if (reason == null || !REASON.matcher(reason).matches()) {
            throw new IllegalArgumentException("reason must be a short code [a-z0-9_]{1,40}, was '"
                    + (reason == null ? null : dev.sluice.config.TokenRedaction.redact(reason)) + "'");
        }
        return reason;
    }

    private void bound() {
        if (registry == null) {
            throw new IllegalStateException("TopologyMetrics.bindTo(registry) must be called before recording");
        }
    }
}
