package dev.sluice.app.ops;

import dev.sluice.metrics.SluiceBinders;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/**
 * The meter registry of one Sluice process: Prometheus, a {@code process} common tag
 * ({@code topology} or {@code sender}) and the JVM meters. Close it on shutdown.
 */
public final class ProcessMetrics implements AutoCloseable {
    /** Common tag naming the kind of process, so one dashboard can tell topology from senders. */
    public static final String TAG_PROCESS = "process";

    private final PrometheusMeterRegistry registry;
    private final AutoCloseable jvm;

    private ProcessMetrics(String process) {
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        registry.config().commonTags(TAG_PROCESS, process);
        jvm = SluiceBinders.jvm(registry);
    }

    /** @param process {@code topology}, {@code sender} or {@code demo} */
    public static ProcessMetrics create(String process) {
        return new ProcessMetrics(process);
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    @Override
    public void close() {
        try {
            jvm.close();
        } catch (Exception ignored) {
            // Only a GC notification listener; nothing to recover.
        }
        registry.close();
    }
}
