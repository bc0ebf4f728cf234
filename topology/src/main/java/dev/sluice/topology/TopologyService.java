package dev.sluice.topology;

import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SchemaRegistryClient;
import java.time.Duration;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.Topology;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the Sluice topology: builds it with {@link SluiceTopology} and starts {@link KafkaStreams}.
 * Creates nothing else: topics are created by whoever deploys (see {@link TopicBootstrap}).
 *
 * <p>An exception that escapes processing (e.g. a retriable schema registry outage) is logged and the
 * stream thread is replaced; the records since the last commit are processed again (exactly-once). Replacements
 * are bounded ({@link StreamThreadReplacements}: {@code stream.thread.replacements.max} within
 * {@code stream.thread.replacements.window.ms}); after that the client shuts down (state ERROR).
 */
public final class TopologyService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TopologyService.class);
    public static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

    private final TopologyConfig config;
    private final Topology topology;
    private final KafkaStreams streams;
    private final StreamThreadReplacements replacements;
    private final ChatKeyedInput keyedInput = ChatKeyedInput.unknown();

    /** Uses a {@link CachedSchemaRegistryClient} built from the config's {@code schema.registry.*} keys. */
    public TopologyService(TopologyConfig config) {
        this(config, CachedSchemaRegistryClient.fromSettings(config.settings()));
    }

    public TopologyService(TopologyConfig config, SchemaRegistryClient registry) {
        this(config, registry, TopologyCounters.NONE);
    }

    /** With {@code counters} told about every decision (metrics; see {@link TopologyCounters}). */
    public TopologyService(TopologyConfig config, SchemaRegistryClient registry, TopologyCounters counters) {
        this.config = config;
        this.topology = SluiceTopology.build(config, registry, counters, keyedInput);
        this.streams = new KafkaStreams(topology, config.streamsProperties());
        this.replacements = new StreamThreadReplacements(config.streamThreadReplacementsMax(),
                config.streamThreadReplacementsWindowMs(), java.time.Clock.systemUTC(), counters::streamThreadFailed);
        this.streams.setUncaughtExceptionHandler(replacements);
        this.streams.setStateListener((newState, oldState) ->
                log.info("topology {} state {} -> {}", config.applicationId(), oldState, newState));
    }

    /**
     * Checks that the chat-keyed topics are co-partitioned ({@link TopicBootstrap#checkCoPartitioned}), tells the
     * topology their partition counts (so records keyed by their chat id skip the repartition, {@link ChatKeyedInput}),
     * then starts processing (returns at once; see {@link #state()}).
     *
     * @throws IllegalStateException when the partition counts differ
     */
    public void start() {
        try (Admin admin = Admin.create(adminProperties())) {
            keyedInput.partitions(TopicBootstrap.checkCoPartitioned(admin, config.topics()));
        }
        log.info("starting topology {}\n{}", config, topology.describe());
        streams.start();
    }

    private java.util.Map<String, Object> adminProperties() {
        java.util.Map<String, Object> p = new java.util.HashMap<>();
        config.kafkaPassThrough().forEach(p::put);
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
        // Only client settings an Admin knows (security, timeouts): Streams-only keys would only log warnings.
        p.keySet().retainAll(AdminClientConfig.configNames());
        return p;
    }

    /** Stream threads replaced since start (bounded, see {@link StreamThreadReplacements}). */
    public long threadReplacements() {
        return replacements.replacements();
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

    /**
     * Stops processing, waits up to {@link #CLOSE_TIMEOUT} for the threads to end, and leaves the consumer
     * group, so a restarted or remaining instance takes the partitions over at once instead of after the
     * session timeout (45 s by default): pending digests and due scheduled posts are not held back.
     */
    @Override
    public void close() {
        streams.close(CloseOptions.timeout(CLOSE_TIMEOUT).withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP));
    }
}
