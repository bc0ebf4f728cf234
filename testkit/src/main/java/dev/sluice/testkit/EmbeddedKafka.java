package dev.sluice.testkit;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An in-process, single-node Kafka cluster in KRaft mode (one process with the combined
 * {@code broker,controller} roles) for tests and the embedded demo.
 *
 * <p><b>Internal Kafka API, pinned version.</b> This class formats the storage with
 * {@link org.apache.kafka.metadata.storage.Formatter} and runs {@link kafka.server.KafkaRaftServer}
 * from {@code org.apache.kafka:kafka_2.13}. Neither is a public Kafka API: both may change in any
 * Kafka release. It is written and tested against Kafka <b>4.4.0</b> (pinned as {@code kafka.version}
 * in the parent POM); re-run {@code EmbeddedKafkaIT} after any Kafka upgrade.
 *
 * <p>Shape: PLAINTEXT listener and CONTROLLER listener on 127.0.0.1 on free ports, a static quorum
 * of one voter (node id 1), a fresh temporary log directory that {@link #close()} deletes. Settings
 * suit tests: the offsets, transaction-state and share-state topics use replication factor 1 and
 * min ISR 1 (so transactional producers and Kafka Streams {@code exactly_once_v2} work), the group
 * initial rebalance delay is 0, topics are never auto-created, and thread counts and the log
 * cleaner's buffer are small. Override any broker property with {@link #start(Map)}.
 */
public final class EmbeddedKafka implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedKafka.class);
    private static final int NODE_ID = 1;
    private static final int START_ATTEMPTS = 3;
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

    private final KafkaRaftServer server;
    private final Path logDir;
    private final String bootstrapServers;
    private final String clusterId;
    private Admin admin;
    private boolean closed;
    /** The log dir was given by the caller: close() keeps it, a later start on it finds the topics. */
    private boolean keepLogDir;

    private EmbeddedKafka(KafkaRaftServer server, Path logDir, String bootstrapServers, String clusterId) {
        this.server = server;
        this.logDir = logDir;
        this.bootstrapServers = bootstrapServers;
        this.clusterId = clusterId;
    }

    /** Starts a broker with the default test settings; blocks until it answers an Admin call. */
    public static EmbeddedKafka start() {
        return start(Map.of());
    }

    /**
     * Starts a broker; {@code brokerOverrides} replace or add broker properties (e.g.
     * {@code "num.partitions" -> "3"}). Listener, quorum and log-dir keys are chosen here; overriding
     * them is possible but then the caller owns their consistency.
     *
     * @throws IllegalStateException if the broker does not start (after {@value #START_ATTEMPTS}
     *     attempts with fresh ports, in case a just-probed free port was taken meanwhile)
     */
    public static EmbeddedKafka start(Map<String, String> brokerOverrides) {
        RuntimeException last = null;
        for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
            try {
                return startOnce(brokerOverrides);
            } catch (RuntimeException e) {
                last = e;
                LOG.warn("embedded Kafka start attempt {} failed: {}", attempt, e.toString());
            }
        }
        throw new IllegalStateException("embedded Kafka did not start after " + START_ATTEMPTS + " attempts", last);
    }

    /**
     * Starts a broker whose log dir is kept: on {@code logDir} when it already holds a formatted log (its cluster
     * id is reused, topics and committed offsets are found again), else formatted there; {@link #close()} leaves
     * it. For {@code sluice dev --data-dir}.
     *
     * @param brokerPort the PLAINTEXT listener's port, or 0 for a free one
     * @throws IllegalStateException if the broker does not start (one attempt: the port is the caller's)
     */
    public static EmbeddedKafka startPersistent(Path logDir, int brokerPort, Map<String, String> brokerOverrides) {
        try {
            Files.createDirectories(logDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the Kafka log dir " + logDir, e);
        }
        EmbeddedKafka kafka = startOnce(brokerOverrides, logDir, brokerPort, true);
        kafka.keepLogDir = true;
        return kafka;
    }

    private static EmbeddedKafka startOnce(Map<String, String> brokerOverrides) {
        Path dir;
        try {
            dir = Files.createTempDirectory("sluice-kafka-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temp dir for the Kafka log", e);
        }
        return startOnce(brokerOverrides, dir, 0, false);
    }

    private static EmbeddedKafka startOnce(Map<String, String> brokerOverrides, Path dir, int fixedBrokerPort, boolean keep) {
        KafkaRaftServer server = null;
        try {
            int[] free = Ports.freePorts(2); // distinct: two freePort() calls can return the same port
            int brokerPort = fixedBrokerPort > 0 ? fixedBrokerPort : free[0];
            int controllerPort = free[1] != brokerPort ? free[1] : free[0];
            Map<String, String> props = defaultProps(dir, brokerPort, controllerPort);
            props.putAll(brokerOverrides);
            Properties properties = new Properties();
            properties.putAll(props);
            KafkaConfig config = KafkaConfig.fromProps(properties, false);

            String clusterId = existingClusterId(dir);
            if (clusterId == null) {
                clusterId = Uuid.randomUuid().toString();
                format(config, clusterId, dir);
            }

            server = new KafkaRaftServer(config, Time.SYSTEM);
            server.startup();
            String bootstrap = "127.0.0.1:" + brokerPort;
            EmbeddedKafka kafka = new EmbeddedKafka(server, dir, bootstrap, clusterId);
            kafka.awaitReady();
            LOG.info("embedded Kafka {} ready at {} (log dir {})", KAFKA_VERSION_NOTE, bootstrap, dir);
            return kafka;
        } catch (RuntimeException e) {
            if (server != null) {
                shutdownQuietly(server);
            }
            if (!keep) {
                deleteRecursively(dir);
            }
            throw e;
        } catch (Exception e) {
            if (server != null) {
                shutdownQuietly(server);
            }
            if (!keep) {
                deleteRecursively(dir);
            }
            throw new IllegalStateException("embedded Kafka failed to start: " + e, e);
        }
    }

    private static final String KAFKA_VERSION_NOTE = "4.4.0 (KRaft, combined broker+controller)";

    private static Map<String, String> defaultProps(Path dir, int brokerPort, int controllerPort) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("process.roles", "broker,controller");
        p.put("node.id", String.valueOf(NODE_ID));
        p.put("controller.quorum.voters", NODE_ID + "@127.0.0.1:" + controllerPort);
        p.put("listeners", "PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
        p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
        p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.put("controller.listener.names", "CONTROLLER");
        p.put("inter.broker.listener.name", "PLAINTEXT");
        p.put("log.dirs", dir.toAbsolutePath().toString());
        // One node: every internal topic must live with replication factor 1.
        p.put("offsets.topic.replication.factor", "1");
        p.put("offsets.topic.num.partitions", "5");
        p.put("transaction.state.log.replication.factor", "1");
        p.put("transaction.state.log.min.isr", "1");
        p.put("transaction.state.log.num.partitions", "5");
        p.put("share.coordinator.state.topic.replication.factor", "1");
        p.put("share.coordinator.state.topic.min.isr", "1");
        p.put("default.replication.factor", "1");
        p.put("min.insync.replicas", "1");
        p.put("num.partitions", "1");
        // Tests create their topics explicitly; a typo must fail, not create a topic.
        p.put("auto.create.topics.enable", "false");
        // No 3 s wait before the first consumer group rebalance.
        p.put("group.initial.rebalance.delay.ms", "0");
        // Small footprint on a shared machine; the cleaner still runs (Streams changelogs are compacted).
        p.put("num.network.threads", "2");
        p.put("num.io.threads", "4");
        p.put("background.threads", "2");
        p.put("num.recovery.threads.per.data.dir", "1");
        p.put("log.cleaner.threads", "1");
        p.put("log.cleaner.dedupe.buffer.size", String.valueOf(4 * 1024 * 1024));
        p.put("log.segment.bytes", String.valueOf(16 * 1024 * 1024));
        p.put("log.retention.check.interval.ms", "60000");
        return p;
    }

    /** The cluster id of a log dir formatted before ({@code meta.properties}), or null for a fresh dir. */
    private static String existingClusterId(Path dir) throws IOException {
        Path meta = dir.resolve("meta.properties");
        if (!Files.exists(meta)) {
            return null;
        }
        Properties p = new Properties();
        try (var in = Files.newInputStream(meta)) {
            p.load(in);
        }
        String id = p.getProperty("cluster.id");
        if (id == null || id.isBlank()) {
            throw new IllegalStateException(meta + " has no cluster.id: not a Kafka log dir this class formatted");
        }
        return id;
    }

    private static void format(KafkaConfig config, String clusterId, Path dir) throws Exception {
        Formatter formatter = new Formatter()
                .setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
                .setNodeId(NODE_ID)
                .setClusterId(clusterId)
                .setDirectories(List.of(dir.toAbsolutePath().toString()))
                .setMetadataLogDirectory(config.metadataLogDir())
                .setControllerListenerName("CONTROLLER")
                .setReleaseVersion(MetadataVersion.latestProduction())
                .setIgnoreFormatted(false);
        formatter.run();
    }

    private void awaitReady() throws InterruptedException, ExecutionException, TimeoutException {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        Exception last = null;
        while (System.nanoTime() < deadline) {
            try {
                int nodes = admin().describeCluster().nodes().get(5, TimeUnit.SECONDS).size();
                if (nodes == 1) {
                    return;
                }
            } catch (ExecutionException | TimeoutException e) {
                last = e;
            }
            Thread.sleep(50); // bounded poll of a condition, not a sleep-and-hope
        }
        throw new TimeoutException("broker did not answer describeCluster within " + READY_TIMEOUT
                + (last == null ? "" : ": " + last));
    }

    /** {@code host:port} of the PLAINTEXT listener, for {@code bootstrap.servers}. */
    public String bootstrapServers() {
        return bootstrapServers;
    }

    /** The random cluster id the storage was formatted with. */
    public String clusterId() {
        return clusterId;
    }

    /** The broker's temporary log directory; deleted by {@link #close()}. */
    public Path logDir() {
        return logDir;
    }

    /** A shared Admin client bound to this broker; closed by {@link #close()} (do not close it yourself). */
    public synchronized Admin admin() {
        if (closed) {
            throw new IllegalStateException("embedded Kafka is closed");
        }
        if (admin == null) {
            Map<String, Object> conf = new LinkedHashMap<>();
            conf.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
            conf.put(AdminClientConfig.CLIENT_ID_CONFIG, "sluice-embedded-kafka-admin");
            admin = Admin.create(conf);
        }
        return admin;
    }

    /**
     * Creates topics with {@code partitions} partitions each (replication factor 1) and waits until
     * the creation is acknowledged.
     *
     * @throws IllegalStateException if any topic cannot be created (e.g. it exists)
     */
    public void createTopics(int partitions, String... names) {
        List<NewTopic> topics = new ArrayList<>();
        for (String name : names) {
            topics.add(new NewTopic(name, partitions, (short) 1));
        }
        create(topics);
    }

    /**
     * Creates one topic with topic-level {@code configs} (e.g. {@code cleanup.policy=compact}),
     * replication factor 1, and waits until the creation is acknowledged.
     */
    public void createTopic(String name, int partitions, Map<String, String> configs) {
        create(List.of(new NewTopic(name, partitions, (short) 1).configs(configs)));
    }

    private void create(List<NewTopic> topics) {
        try {
            admin().createTopics(topics).all().get(30, TimeUnit.SECONDS);
            TopicReadiness.await(admin(), topics.stream().map(NewTopic::name).toList());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topics", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot create topics " + topics.stream().map(NewTopic::name).toList()
                    + ": " + e.getMessage(), e);
        }
    }

    /** Stops the broker (bounded by Kafka's own shutdown) and deletes the log directory (kept after {@link #startPersistent}). Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
        shutdownQuietly(server);
        if (!keepLogDir) {
            deleteRecursively(logDir);
        }
    }

    private static void shutdownQuietly(KafkaRaftServer server) {
        try {
            server.shutdown();
            server.awaitShutdown();
        } catch (RuntimeException e) {
            LOG.warn("embedded Kafka shutdown: {}", e.toString());
        }
    }

    private static void deleteRecursively(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            List<Path> all = new ArrayList<>(paths.toList());
            all.sort(Comparator.reverseOrder());
            for (Path path : all) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            LOG.warn("cannot delete embedded Kafka log dir {}: {}", dir, e.toString());
        }
    }

    @Override
    public String toString() {
        return "EmbeddedKafka[" + bootstrapServers + ", clusterId=" + clusterId + "]";
    }

}
