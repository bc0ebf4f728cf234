package dev.sluice.topology;

import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SchemaRegistryClient;
import java.time.Duration;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the Sluice topology: builds it with {@link SluiceTopology} and starts {@link KafkaStreams}.
 * Creates nothing else: topics are created by whoever deploys (see {@link TopicBootstrap}).
 *
 * <p>An exception that escapes processing (e.g. a retriable schema registry outage) is logged and the
 * stream thread is replaced; the records since the last commit are processed again (exactly-once).
 */
public final class TopologyService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TopologyService.class);
    public static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

    private final TopologyConfig config;
    private final Topology topology;
    private final KafkaStreams streams;

    /** Uses a {@link CachedSchemaRegistryClient} built from the config's {@code schema.registry.*} keys. */
    public TopologyService(TopologyConfig config) {
        this(config, CachedSchemaRegistryClient.fromSettings(config.settings()));
    }

    public TopologyService(TopologyConfig config, SchemaRegistryClient registry) {
        this.config = config;
        this.topology = SluiceTopology.build(config, registry);
        this.streams = new KafkaStreams(topology, config.streamsProperties());
        this.streams.setUncaughtExceptionHandler(exception -> {
            log.error("stream thread of {} failed; replacing it", config.applicationId(), exception);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
        });
        this.streams.setStateListener((newState, oldState) ->
                log.info("topology {} state {} -> {}", config.applicationId(), oldState, newState));
    }

    /** Starts processing (returns at once; see {@link #state()}). */
    public void start() {
        log.info("starting topology {}\n{}", config, topology.describe());
        streams.start();
    }

    public KafkaStreams.State state() {
        return streams.state();
    }

    /** The running topology (e.g. to print {@code describe()}). */
    public Topology topology() {
        return topology;
    }

    /** The underlying KafkaStreams, for metrics and interactive queries. */
    public KafkaStreams streams() {
        return streams;
    }

    /** Stops processing and waits up to {@link #CLOSE_TIMEOUT} for the threads to end. */
    @Override
    public void close() {
        streams.close(CLOSE_TIMEOUT);
    }
}
