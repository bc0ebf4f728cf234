package dev.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A local Redis Sentinel set for tests: one primary, {@code replicas} replicas and {@code sentinels}
 * Sentinels (quorum: a majority), every one a {@code redis-server} process on a free 127.0.0.1 port (the
 * binary of {@link RedisLauncher#serverBinary()}; a Sentinel is {@code redis-server <config> --sentinel}),
 * without persistence. The master name is {@value #MASTER_NAME}; a primary is considered down after
 * {@value #DOWN_AFTER_MS} ms without an answer.
 *
 * <p>{@link #url()} is the Lettuce Sentinel URL a client is configured with; {@link #primary()} asks the
 * Sentinels which node is the primary now; {@link #awaitFailover(RedisNode, Duration)} waits until they have
 * promoted another one after {@link RedisNode#kill9()}. Owned by the test thread that started it;
 * {@link #close()} stops every process by its own handle (also from a shutdown hook).
 */
public final class RedisSentinels implements AutoCloseable {
    /** The monitored master's name, the fragment of {@link #url()}. */
    public static final String MASTER_NAME = "sluice";
    /** {@code down-after-milliseconds}. */
    public static final int DOWN_AFTER_MS = 1_000;
    private static final Logger LOG = LoggerFactory.getLogger(RedisSentinels.class);
    private static final Duration FORM_TIMEOUT = Duration.ofSeconds(30);

    private final Path dir;
    private final List<RedisNode> dataNodes;
    private final List<RedisNode> sentinels;
    private final Thread shutdownHook;

    private RedisSentinels(Path dir, List<RedisNode> dataNodes, List<RedisNode> sentinels) {
        this.dir = dir;
        this.dataNodes = List.copyOf(dataNodes);
        this.sentinels = List.copyOf(sentinels);
        this.shutdownHook = new Thread(this::stopAll, "sluice-redis-sentinels-stop");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Starts a primary, its replicas and the Sentinels, and returns once every Sentinel monitors the primary,
     * knows the replicas and the other Sentinels.
     *
     * @throws IllegalArgumentException if {@code replicas < 1} or {@code sentinels < 3}
     * @throws IllegalStateException if the set does not form within 30 s (the processes are stopped)
     */
    public static RedisSentinels start(int replicas, int sentinels) {
        if (replicas < 1 || sentinels < 3) {
            throw new IllegalArgumentException("replicas: must be >= 1 (was " + replicas + "); sentinels: must be >= 3 (was " + sentinels + ")");
        }
        Path dir;
        try {
            dir = Files.createTempDirectory("sluice-redis-sentinel-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temp dir for Redis Sentinel", e);
        }
        Path binary = RedisLauncher.serverBinary();
        List<RedisNode> data = new ArrayList<>();
        List<RedisNode> watchers = new ArrayList<>();
        try {
            RedisNode primary = RedisNode.start("redis-primary", binary, dir, List.of(), List.of());
            data.add(primary);
            for (int i = 0; i < replicas; i++) {
                data.add(RedisNode.start("redis-replica", binary, dir, List.of(),
                        List.of("--replicaof", "127.0.0.1", Integer.toString(primary.port()))));
            }
            int quorum = sentinels / 2 + 1;
            for (int i = 0; i < sentinels; i++) {
                Path conf = Files.createTempFile(dir, "sentinel-", ".conf");
                Files.writeString(conf, String.join("\n",
                        "sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + primary.port() + " " + quorum,
                        "sentinel down-after-milliseconds " + MASTER_NAME + " " + DOWN_AFTER_MS,
                        "sentinel failover-timeout " + MASTER_NAME + " 10000",
                        "sentinel parallel-syncs " + MASTER_NAME + " 1", ""));
                watchers.add(RedisNode.start("sentinel", binary, dir, List.of(conf.toString(), "--sentinel"), List.of()));
            }
            RedisSentinels set = new RedisSentinels(dir, data, watchers);
            await("every Sentinel sees the primary, " + replicas + " replica(s) and " + (sentinels - 1) + " other Sentinel(s)",
                    () -> watchers.stream().allMatch(s -> count(s, "REPLICAS") == replicas && count(s, "SENTINELS") == sentinels - 1));
            LOG.info("Redis Sentinel set formed: primary {}, sentinels {}", primary.address(), set.url());
            return set;
        } catch (IOException | RuntimeException e) {
            data.forEach(RedisNode::stop);
            watchers.forEach(RedisNode::stop);
            RedisCluster.deleteRecursively(dir);
            throw e instanceof RuntimeException re ? re : new IllegalStateException("cannot start Redis Sentinel: " + e, e);
        }
    }

    /** The Lettuce URL of this set: {@code redis-sentinel://127.0.0.1:s1,127.0.0.1:s2,...#sluice}. */
    public String url() {
        return "redis-sentinel://" + sentinels.stream().map(RedisNode::address).collect(Collectors.joining(",")) + "#" + MASTER_NAME;
    }

    /** The Sentinels. */
    public List<RedisNode> sentinels() {
        return sentinels;
    }

    /** The primary and the replicas, in start order (the first was the primary at start). */
    public List<RedisNode> dataNodes() {
        return dataNodes;
    }

    /** The node the first answering Sentinel names as the primary now. */
    public Optional<RedisNode> primary() {
        for (RedisNode sentinel : sentinels) {
            if (!sentinel.isRunning()) {
                continue;
            }
            try {
                List<?> addr = (List<?>) sentinel.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
                int port = Integer.parseInt(String.valueOf(addr.get(1)));
                return dataNodes.stream().filter(n -> n.port() == port).findFirst();
            } catch (IOException | RuntimeException e) {
                // ask the next Sentinel
            }
        }
        return Optional.empty();
    }

    /**
     * Waits until the Sentinels name a running node other than {@code former} as the primary and that node
     * says it is one; returns it.
     *
     * @throws IllegalStateException if that does not happen within {@code timeout}
     */
    public RedisNode awaitFailover(RedisNode former, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            Optional<RedisNode> now = primary();
            if (now.isPresent() && now.get() != former && now.get().isRunning() && isPrimary(now.get())) {
                return now.get();
            }
            RedisNode.sleep(50);
        }
        throw new IllegalStateException("the Sentinels did not promote a replica of " + former + " within " + timeout);
    }

    private static boolean isPrimary(RedisNode node) {
        try {
            return String.valueOf(node.call("INFO", "replication")).contains("role:master");
        } catch (IOException e) {
            return false;
        }
    }

    private static long count(RedisNode sentinel, String what) {
        try {
            return ((List<?>) sentinel.call("SENTINEL", what, MASTER_NAME)).size();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + FORM_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return;
            }
            RedisNode.sleep(50);
        }
        throw new IllegalStateException("Redis Sentinel: not true within " + FORM_TIMEOUT + ": " + what);
    }

    private void stopAll() {
        sentinels.forEach(RedisNode::stop);
        dataNodes.forEach(RedisNode::stop);
    }

    /** Stops every process and deletes the work directory. Idempotent. */
    @Override
    public void close() {
        stopAll();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs anyway
        }
        RedisCluster.deleteRecursively(dir);
    }

    @Override
    public String toString() {
        return "RedisSentinels[" + url() + "]";
    }
}
