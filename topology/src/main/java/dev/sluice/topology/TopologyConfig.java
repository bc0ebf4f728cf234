package dev.sluice.topology;

import dev.sluice.config.ConfigException;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;
import org.apache.kafka.streams.StreamsConfig;

/**
 * Immutable configuration of the topology application, read once from {@link Settings} and validated
 * (a {@link ConfigException} names the key and the value).
 *
 * <p>Keys (environment override {@code SLUICE_<KEY>}, e.g. {@code SLUICE_BOOTSTRAP_SERVERS}):
 * <ul>
 *   <li>{@code bootstrap.servers} (required) Kafka brokers, {@code host:port,...}</li>
 *   <li>{@code schema.registry.url} (required) Confluent-compatible registry URL(s), comma separated; the
 *       other {@code CachedSchemaRegistryClient} keys ({@code basic.auth.user.info},
 *       {@code schema.registry.connect.timeout.ms}, {@code schema.registry.request.timeout.ms},
 *       {@code schema.registry.retry.max.ms}) apply</li>
 *   <li>{@code application.id} (default {@code sluice-topology}) Kafka Streams application id: consumer
 *       group and prefix of the internal topics ({@code <application.id>-by-chat-repartition})</li>
 *   <li>{@code processing.guarantee} (default {@code exactly_once_v2}; or {@code at_least_once})</li>
 *   <li>{@code state.dir} (default: Kafka Streams' default under java.io.tmpdir) local state directory</li>
 *   <li>{@code num.stream.threads} (default 1)</li>
 *   <li>{@code commit.interval.ms} (default: Kafka Streams' default, 100 ms under exactly-once)</li>
 *   <li>{@code topic.*} topic names, see {@link Topics}</li>
 *   <li>{@code kafka.<any Kafka client or Streams property>} passed through with the prefix removed, e.g.
 *       {@code kafka.security.protocol=SASL_SSL}, {@code kafka.replication.factor=3}. The named keys above
 *       win over a pass-through of the same name.</li>
 * </ul>
 */
public final class TopologyConfig {
    public static final String BOOTSTRAP_SERVERS = "bootstrap.servers";
    public static final String SCHEMA_REGISTRY_URL = "schema.registry.url";
    public static final String APPLICATION_ID = "application.id";
    public static final String PROCESSING_GUARANTEE = "processing.guarantee";
    public static final String STATE_DIR = "state.dir";
    public static final String NUM_STREAM_THREADS = "num.stream.threads";
    public static final String COMMIT_INTERVAL_MS = "commit.interval.ms";
    public static final String KAFKA_PREFIX = "kafka.";
    public static final String DEFAULT_APPLICATION_ID = "sluice-topology";

    private final Settings settings;
    private final String bootstrapServers;
    private final String schemaRegistryUrl;
    private final String applicationId;
    private final String processingGuarantee;
    private final Optional<String> stateDir;
    private final int numStreamThreads;
    private final OptionalLong commitIntervalMs;
    private final Topics topics;
    private final Map<String, String> kafkaPassThrough;

    private TopologyConfig(Settings s) {
        this.settings = s;
        this.bootstrapServers = s.required(BOOTSTRAP_SERVERS);
        this.schemaRegistryUrl = s.required(SCHEMA_REGISTRY_URL);
        this.applicationId = s.string(APPLICATION_ID, DEFAULT_APPLICATION_ID);
        if (!applicationId.matches("[a-zA-Z0-9._-]+")) {
            throw Settings.invalid(APPLICATION_ID, applicationId, "letters, digits, '.', '_' and '-' only (it prefixes topic names)");
        }
        String guarantee = s.string(PROCESSING_GUARANTEE, StreamsConfig.EXACTLY_ONCE_V2).trim().toLowerCase();
        if (!guarantee.equals(StreamsConfig.EXACTLY_ONCE_V2) && !guarantee.equals(StreamsConfig.AT_LEAST_ONCE)) {
            throw Settings.invalid(PROCESSING_GUARANTEE, guarantee, StreamsConfig.EXACTLY_ONCE_V2 + " or " + StreamsConfig.AT_LEAST_ONCE);
        }
        this.processingGuarantee = guarantee;
        this.stateDir = Optional.ofNullable(s.string(STATE_DIR, null));
        this.numStreamThreads = s.positiveInt(NUM_STREAM_THREADS, 1);
        this.commitIntervalMs = s.has(COMMIT_INTERVAL_MS) ? OptionalLong.of(s.positiveLong(COMMIT_INTERVAL_MS, 100)) : OptionalLong.empty();
        this.topics = Topics.from(s);
        this.kafkaPassThrough = Map.copyOf(s.withPrefix(KAFKA_PREFIX));
    }

    /** Reads and validates; fails with a {@link ConfigException} naming the key and value. */
    public static TopologyConfig from(Settings settings) {
        return new TopologyConfig(settings);
    }

    /** Properties for {@code new KafkaStreams(topology, props)}: pass-through first, named keys on top. */
    public Properties streamsProperties() {
        Properties p = new Properties();
        p.putAll(kafkaPassThrough);
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, processingGuarantee);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, Integer.toString(numStreamThreads));
        stateDir.ifPresent(d -> p.put(StreamsConfig.STATE_DIR_CONFIG, d));
        commitIntervalMs.ifPresent(ms -> p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, Long.toString(ms)));
        return p;
    }

    /** The settings this was read from (for the schema registry client and later, issue-specific keys). */
    public Settings settings() {
        return settings;
    }

    public String bootstrapServers() {
        return bootstrapServers;
    }

    public String schemaRegistryUrl() {
        return schemaRegistryUrl;
    }

    public String applicationId() {
        return applicationId;
    }

    public String processingGuarantee() {
        return processingGuarantee;
    }

    public Optional<String> stateDir() {
        return stateDir;
    }

    public int numStreamThreads() {
        return numStreamThreads;
    }

    public OptionalLong commitIntervalMs() {
        return commitIntervalMs;
    }

    public Topics topics() {
        return topics;
    }

    /** {@code kafka.*} entries with the prefix removed. */
    public Map<String, String> kafkaPassThrough() {
        return kafkaPassThrough;
    }

    @Override
    public String toString() {
        StringBuilder pass = new StringBuilder();
        kafkaPassThrough.forEach((k, v) -> pass.append(k).append('=').append(Settings.redactIfSecret(k, v)).append(", "));
        return "TopologyConfig{application.id=" + applicationId + ", bootstrap.servers=" + bootstrapServers
                + ", processing.guarantee=" + processingGuarantee + ", num.stream.threads=" + numStreamThreads
                + ", topics=" + topics + ", kafka.*={" + pass + "}}";
    }
}
