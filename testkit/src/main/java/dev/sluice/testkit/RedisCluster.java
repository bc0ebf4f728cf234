package dev.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A local Redis Cluster for tests and benchmarks: {@code masters} primaries and {@code replicasPerMaster}
 * replicas each, every one a {@code redis-server} process in cluster mode on a free 127.0.0.1 port (the
 * binary on the PATH, else the one bundled in embedded-redis; see {@link RedisLauncher#serverBinary()}),
 * without persistence. The 16,384 hash slots are split evenly over the primaries with
 * {@code CLUSTER ADDSLOTS}, the nodes meet, each replica follows its primary with {@code CLUSTER REPLICATE},
 * and {@link #start} returns once every node reports {@code cluster_state:ok} and every primary has its
 * replicas online.
 *
 * <p>Failover is quick on purpose: {@code cluster-node-timeout} is {@value #NODE_TIMEOUT_MS} ms and a replica
 * may always take over ({@code cluster-replica-validity-factor 0}); {@code cluster-require-full-coverage no}
 * keeps the other primaries' slots served while one primary is down, as a production cluster would be set up
 * for availability. {@link #kill9(RedisNode)} crashes a node; {@link #awaitPrimaryOf(String, RedisNode)} waits
 * until another node serves a key's slot.
 *
 * <p>Owned by the test thread that started it; {@link #close()} stops every process by its own handle (also
 * from a JVM shutdown hook if the test never closes it).
 */
public final class RedisCluster implements AutoCloseable {
    /** {@code cluster-node-timeout}: how long a primary may be unreachable before its replica takes over. */
    public static final int NODE_TIMEOUT_MS = 1_000;
    private static final Logger LOG = LoggerFactory.getLogger(RedisCluster.class);
    private static final int SLOTS = 16_384;
    private static final Duration FORM_TIMEOUT = Duration.ofSeconds(30);

    private final Path dir;
    private final List<RedisNode> nodes;
    private final Thread shutdownHook;

    private RedisCluster(Path dir, List<RedisNode> nodes) {
        this.dir = dir;
        this.nodes = List.copyOf(nodes);
        this.shutdownHook = new Thread(this::stopAll, "sluice-redis-cluster-stop");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Starts and forms a cluster.
     *
     * @throws IllegalArgumentException if {@code masters < 3} (Redis Cluster's own minimum for failover) or
     *         {@code replicasPerMaster < 0}
     * @throws IllegalStateException if the cluster does not form within 30 s (the processes are stopped)
     */
    public static RedisCluster start(int masters, int replicasPerMaster) {
        if (masters < 3 || replicasPerMaster < 0) {
            throw new IllegalArgumentException("masters: must be >= 3 (was " + masters + "); replicasPerMaster: must be >= 0 (was "
                    + replicasPerMaster + ")");
        }
        Path dir;
        try {
            dir = Files.createTempDirectory("sluice-redis-cluster-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temp dir for the Redis Cluster", e);
        }
        Path binary = RedisLauncher.serverBinary();
        List<RedisNode> started = new ArrayList<>();
        try {
            for (int i = 0; i < masters * (1 + replicasPerMaster); i++) {
                started.add(RedisNode.start("cluster-node", binary, dir, List.of(), List.of(
                        "--cluster-enabled", "yes",
                        "--cluster-config-file", "nodes.conf",
                        "--cluster-node-timeout", Integer.toString(NODE_TIMEOUT_MS),
                        "--cluster-replica-validity-factor", "0",
                        "--cluster-require-full-coverage", "no")));
            }
            RedisCluster cluster = new RedisCluster(dir, started);
            cluster.form(masters, replicasPerMaster);
            LOG.info("Redis Cluster of {} primaries and {} replicas each formed: {}", masters, replicasPerMaster, cluster.seeds());
            return cluster;
        } catch (IOException | RuntimeException e) {
            started.forEach(RedisNode::stop);
            deleteRecursively(dir);
            throw e instanceof RuntimeException re ? re : new IllegalStateException("cannot form the Redis Cluster: " + e, e);
        }
    }

    private void form(int masters, int replicasPerMaster) throws IOException {
        List<RedisNode> primaries = nodes.subList(0, masters);
        for (int m = 0; m < masters; m++) {
            int from = m * SLOTS / masters;
            int to = (m + 1) * SLOTS / masters;
            List<String> cmd = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
            for (int slot = from; slot < to; slot++) {
                cmd.add(Integer.toString(slot));
            }
            primaries.get(m).call(cmd.toArray(String[]::new));
            primaries.get(m).call("CLUSTER", "SET-CONFIG-EPOCH", Integer.toString(m + 1));
        }
        for (RedisNode node : nodes.subList(1, nodes.size())) {
            node.call("CLUSTER", "MEET", "127.0.0.1", Integer.toString(nodes.get(0).port()));
        }
        await("every node knows all " + nodes.size(), () -> nodes.stream().allMatch(n -> knownNodes(n) == nodes.size()));
        for (int r = 0; r < masters * replicasPerMaster; r++) {
            RedisNode replica = nodes.get(masters + r);
            String primaryId = id(primaries.get(r % masters));
            await(replica + " replicates its primary", () -> {
                try {
                    replica.call("CLUSTER", "REPLICATE", primaryId);
                    return true;
                } catch (IOException e) {
                    return false; // the replica has not learned the primary's id yet
                }
            });
        }
        await("cluster_state:ok on every node with every replica online", () -> nodes.stream().allMatch(RedisCluster::clusterOk)
                && primaries.stream().allMatch(p -> connectedReplicas(p) == replicasPerMaster));
    }

    /** The running nodes that serve slots now (primaries), in port order. */
    public List<RedisNode> primaries() {
        return nodes.stream().filter(RedisNode::isRunning).filter(n -> "master".equals(role(n))).sorted(Comparator.comparingInt(RedisNode::port)).toList();
    }

    /** Every node, running or not, in start order. */
    public List<RedisNode> nodes() {
        return nodes;
    }

    /** The seed addresses of every node, {@code 127.0.0.1:p1,127.0.0.1:p2,...}. */
    public String seeds() {
        return nodes.stream().map(RedisNode::address).collect(Collectors.joining(","));
    }

    /** The hash slot of {@code key} (honours a {@code {hash tag}}), as the cluster computes it. */
    public int slotOf(String key) {
        for (RedisNode node : nodes) {
            if (node.isRunning()) {
                try {
                    return ((Long) node.call("CLUSTER", "KEYSLOT", key)).intValue();
                } catch (IOException e) {
                    // try the next node
                }
            }
        }
        throw new IllegalStateException("no running cluster node answers CLUSTER KEYSLOT");
    }

    /** The primary that serves {@code key}'s slot now, as the running nodes see it. */
    public Optional<RedisNode> primaryOf(String key) {
        int slot = slotOf(key);
        for (RedisNode node : nodes) {
            if (!node.isRunning()) {
                continue;
            }
            try {
                @SuppressWarnings("unchecked")
                List<Object> ranges = (List<Object>) node.call("CLUSTER", "SLOTS");
                for (Object range : ranges) {
                    List<?> r = (List<?>) range;
                    if ((Long) r.get(0) <= slot && slot <= (Long) r.get(1)) {
                        int port = ((Long) ((List<?>) r.get(2)).get(1)).intValue();
                        return nodes.stream().filter(n -> n.port() == port && n.isRunning()).findFirst();
                    }
                }
                return Optional.empty();
            } catch (IOException e) {
                // ask another node
            }
        }
        return Optional.empty();
    }

    /** Crashes {@code node} with SIGKILL. */
    public void kill9(RedisNode node) {
        node.kill9();
    }

    /**
     * Waits until a running node other than {@code former} serves {@code key}'s slot (a replica was promoted)
     * and returns it.
     *
     * @throws IllegalStateException if no node takes over within {@code timeout}
     */
    public RedisNode awaitPrimaryOf(String key, RedisNode former, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            Optional<RedisNode> now = primaryOf(key);
            if (now.isPresent() && now.get() != former && clusterOk(now.get())) {
                return now.get();
            }
            RedisNode.sleep(50);
        }
        throw new IllegalStateException("no replica took over the slot of " + key + " from " + former + " within " + timeout);
    }

    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + FORM_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return;
            }
            RedisNode.sleep(50);
        }
        throw new IllegalStateException("Redis Cluster: not true within " + FORM_TIMEOUT + ": " + what);
    }

    private static String id(RedisNode node) throws IOException {
        return (String) node.call("CLUSTER", "MYID");
    }

    private static long knownNodes(RedisNode node) {
        return infoField(node, "CLUSTER", "cluster_known_nodes").map(Long::parseLong).orElse(0L);
    }

    private static boolean clusterOk(RedisNode node) {
        return infoField(node, "CLUSTER", "cluster_state").filter("ok"::equals).isPresent();
    }

    private static String role(RedisNode node) {
        return infoField(node, "INFO", "role").orElse("unknown");
    }

    private static long connectedReplicas(RedisNode node) {
        return infoField(node, "INFO", "connected_slaves").map(Long::parseLong).orElse(-1L);
    }

    /** A field of {@code CLUSTER INFO} (command "CLUSTER") or {@code INFO replication} (command "INFO"). */
    private static Optional<String> infoField(RedisNode node, String command, String field) {
        try {
            Object reply = "CLUSTER".equals(command) ? node.call("CLUSTER", "INFO") : node.call("INFO", "replication");
            for (String line : String.valueOf(reply).split("\r?\n")) {
                if (line.startsWith(field + ":")) {
                    return Optional.of(line.substring(field.length() + 1).trim());
                }
            }
        } catch (IOException e) {
            // not reachable: no answer
        }
        return Optional.empty();
    }

    private void stopAll() {
        nodes.forEach(RedisNode::stop);
    }

    /** Stops every node and deletes the work directory. Idempotent. */
    @Override
    public void close() {
        stopAll();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs anyway
        }
        deleteRecursively(dir);
    }

    static void deleteRecursively(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            LOG.warn("cannot delete {}: {}", dir, e.toString());
        }
    }

    @Override
    public String toString() {
        return "RedisCluster[" + seeds() + "]";
    }
}
