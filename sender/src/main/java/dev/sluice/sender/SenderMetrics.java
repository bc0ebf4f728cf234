package dev.sluice.sender;

import dev.sluice.avro.DeliveryStatus;
import dev.sluice.sender.budget.Limit;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The sender's Micrometer meters (prefix {@code sluice.}), tagged with the instance id. Small on purpose;
 * the full metric set comes with the metrics issue.
 *
 * <ul>
 * <li>{@code sluice.sender.results{status}}: terminal results written</li>
 * <li>{@code sluice.sender.provider.calls}: provider calls made</li>
 * <li>{@code sluice.sender.provider.429}: 429 answers seen</li>
 * <li>{@code sluice.sender.budget.refusals{limit}}: budget refusals by limit</li>
 * <li>{@code sluice.sender.budget.errors}: budget decisions that failed (Redis unreachable)</li>
 * <li>{@code sluice.sender.lag{}}: due-to-sent lag of delivered messages (timer, p50/p99)</li>
 * <li>{@code sluice.sender.buffered.records}: records held in lanes (gauge)</li>
 * <li>{@code sluice.sender.redelivered.skipped}: redelivered records already finished by the previous owner</li>
 * <li>{@code sluice.sender.backpressure.pauses}: times the partitions were paused (high-water mark)</li>
 * </ul>
 */
public final class SenderMetrics {
    private final Map<DeliveryStatus, Counter> results = new EnumMap<>(DeliveryStatus.class);
    private final Map<Limit, Counter> refusals = new EnumMap<>(Limit.class);
    private final Counter providerCalls;
    private final Counter provider429;
    private final Counter budgetErrors;
    private final Counter pauses;
    private final Counter skipped;
    private final Timer lag;
    private final MeterRegistry registry;
    private final String instance;

    public SenderMetrics(MeterRegistry registry, String instanceId) {
        this.registry = registry;
        this.instance = instanceId;
        for (DeliveryStatus s : DeliveryStatus.values()) {
            results.put(s, Counter.builder("sluice.sender.results").tag("status", s.name())
                    .tag("instance", instanceId).description("terminal results written").register(registry));
        }
        for (Limit l : Limit.values()) {
            if (l != Limit.NONE) {
                refusals.put(l, Counter.builder("sluice.sender.budget.refusals").tag("limit", l.name())
                        .tag("instance", instanceId).description("budget refusals by limit").register(registry));
            }
        }
        providerCalls = Counter.builder("sluice.sender.provider.calls").tag("instance", instanceId).register(registry);
        provider429 = Counter.builder("sluice.sender.provider.429").tag("instance", instanceId)
                .description("429 Too Many Requests answers").register(registry);
        budgetErrors = Counter.builder("sluice.sender.budget.errors").tag("instance", instanceId).register(registry);
        skipped = Counter.builder("sluice.sender.redelivered.skipped").tag("instance", instanceId)
                .description("redelivered records skipped because the previous owner wrote their result")
                .register(registry);
        pauses = Counter.builder("sluice.sender.backpressure.pauses").tag("instance", instanceId)
                .description("times the partitions were paused at the buffer's high-water mark").register(registry);
        lag = Timer.builder("sluice.sender.lag").tag("instance", instanceId)
                .description("due_at to sent_at of delivered messages").publishPercentiles(0.5, 0.99)
                .register(registry);
    }

    void gaugeBuffered(Supplier<Number> buffered) {
        Gauge.builder("sluice.sender.buffered.records", buffered).tag("instance", instance)
                .description("records held in lanes").register(registry);
    }

    void result(DeliveryStatus status) {
        results.get(status).increment();
    }

    void providerCall() {
        providerCalls.increment();
    }

    void tooManyRequests() {
        provider429.increment();
    }

    void refused(Limit limit) {
        Counter c = refusals.get(limit);
        if (c != null) {
            c.increment();
        }
    }

    void budgetError() {
        budgetErrors.increment();
    }

    void skipped() {
        skipped.increment();
    }

    /** Redelivered records this instance skipped because the previous owner already wrote their result. */
    public long skippedAlreadyDone() {
        return (long) skipped.count();
    }

    void paused() {
        pauses.increment();
    }

    /** Times this instance paused its partitions because the buffer reached the high-water mark. */
    public long pauses() {
        return (long) pauses.count();
    }

    void lag(Duration dueToSent) {
        lag.record(dueToSent.isNegative() ? Duration.ZERO : dueToSent);
    }

    /** Messages delivered by this instance. */
    public long delivered() {
        return (long) results.get(DeliveryStatus.DELIVERED).count();
    }

    /** Terminal results written by this instance, by status. */
    public Map<DeliveryStatus, Long> resultsByStatus() {
        Map<DeliveryStatus, Long> out = new EnumMap<>(DeliveryStatus.class);
        results.forEach((s, c) -> out.put(s, (long) c.count()));
        return out;
    }

    /** 429 answers seen by this instance. */
    public long provider429() {
        return (long) provider429.count();
    }

    /** Budget refusals seen by this instance, by limit. */
    public Map<Limit, Long> budgetRefusals() {
        Map<Limit, Long> out = new EnumMap<>(Limit.class);
        refusals.forEach((l, c) -> out.put(l, (long) c.count()));
        return out;
    }

    /** Provider calls made by this instance. */
    public long providerCalls() {
        return (long) providerCalls.count();
    }
}
