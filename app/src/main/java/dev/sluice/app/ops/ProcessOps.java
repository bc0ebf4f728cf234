package dev.sluice.app.ops;

import dev.sluice.config.Settings;
import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.KafkaStreams;

/**
 * Everything ops for one long-running process, in the order a command needs it:
 * <pre>{@code
 * ProcessOps ops = ProcessOps.create("topology", settings, OpsConfig.TOPOLOGY_DEFAULT_PORT); // registry + JVM meters
 * ... build the service with ops.registry() ...
 * ops.bindKafkaStreams(service.streams());
 * ops.serve(HealthCheck.streamsAlive(service::state), HealthCheck.streamsRunning(service::state));
 * ... run; on shutdown: service.close(); ops.close();
 * }</pre>
 * With {@code ops.enabled=false} nothing is served, but the registry still exists.
 */
public final class ProcessOps implements AutoCloseable {
    private final OpsConfig config;
    private final ProcessMetrics metrics;
    private final List<AutoCloseable> bound = new ArrayList<>();
    private OpsServer server;

    private ProcessOps(OpsConfig config, ProcessMetrics metrics) {
        this.config = config;
        this.metrics = metrics;
    }

    /**
     * @param process {@code topology} or {@code sender} (the {@code process} tag of every meter)
     * @param defaultPort {@link OpsConfig#TOPOLOGY_DEFAULT_PORT} or {@link OpsConfig#SENDER_DEFAULT_PORT}
     */
    public static ProcessOps create(String process, Settings settings, int defaultPort) {
        return new ProcessOps(OpsConfig.from(settings, defaultPort), ProcessMetrics.create(process));
    }

    /** The process registry; hand it to the service (Micrometer {@code MeterRegistry}). */
    public PrometheusMeterRegistry registry() {
        return metrics.registry();
    }

    /** Binds Kafka Streams' own metrics (threads, tasks, state stores, embedded clients). */
    public ProcessOps bindKafkaStreams(KafkaStreams streams) {
        KafkaStreamsMetrics m = new KafkaStreamsMetrics(streams);
        m.bindTo(metrics.registry());
        bound.add(m);
        return this;
    }

    /** Starts the ops HTTP server (unless {@code ops.enabled=false}); returns this. */
    public synchronized ProcessOps serve(HealthCheck liveness, HealthCheck readiness) {
        if (server != null) {
            throw new IllegalStateException("already serving on " + server.uri());
        }
        if (config.enabled()) {
            server = OpsServer.start(config, metrics.registry(), liveness, readiness);
        }
        return this;
    }

    /** The bound port, or -1 when not serving. */
    public synchronized int port() {
        return server == null ? -1 : server.port();
    }

    @Override
    public synchronized void close() {
        if (server != null) {
            server.close();
        }
        for (AutoCloseable c : bound) {
            try {
                c.close();
            } catch (Exception ignored) {
                // Metric binders only unregister listeners; nothing to recover on shutdown.
            }
        }
        metrics.close();
    }
}
