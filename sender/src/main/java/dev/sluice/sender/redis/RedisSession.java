package dev.sluice.sender.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * One Lettuce connection to Sluice's Redis, whatever its {@link RedisEndpoint.Topology}: the commands every
 * Sluice client uses (EVALSHA/EVAL, SCRIPT LOAD, GET, SET, TIME, SCAN, ...) through Lettuce's
 * {@link RedisClusterCommands}, the interface both the standalone and the cluster client implement. On a
 * cluster, Lettuce routes each keyed command to the primary of its key's slot (Sluice's keys of one call share a
 * {@code {bot}} hash tag), follows MOVED and ASK, and refreshes its view of the cluster on redirects, on
 * reconnect attempts and every {@value #PERIODIC_REFRESH_S} s, so a promoted replica is found soon after a
 * failover. Through Sentinel, a reconnect asks the Sentinels for the primary again.
 *
 * <p>On a server or a Sentinel set, commands fail fast while disconnected (no buffering: the caller decides what
 * an outage means); on a cluster, where Lettuce opens each node's connection on first use, a command waits for
 * that connection and is cancelled unwritten at the command timeout. Every command is bounded by the timeout. Lettuce connections are thread-safe; this object is shared by every thread of
 * its owner and closed once by it.
 */
public final class RedisSession<K, V> implements AutoCloseable {
    /** Period of the cluster topology refresh besides the adaptive triggers, in seconds. */
    static final int PERIODIC_REFRESH_S = 5;

    /**
     * How long a client's event loop outlives its shutdown beyond the handshake timeout (the command timeout): Lettuce's
     * timer ticks every 100 ms and hands the timeout to a computation thread before it reaches the event loop.
     */
    static final Duration HANDSHAKE_MARGIN = Duration.ofMillis(500);

    private final RedisEndpoint endpoint;
    private final Duration commandTimeout;
    private final AbstractRedisClient client;
    private final StatefulConnection<K, V> connection;
    private final RedisClusterCommands<K, V> commands;
    private final RedisClusterAsyncCommands<K, V> asyncCommands;

    private RedisSession(RedisEndpoint endpoint, Duration commandTimeout, AbstractRedisClient client,
                         StatefulConnection<K, V> connection, RedisClusterCommands<K, V> commands,
                         RedisClusterAsyncCommands<K, V> asyncCommands) {
        this.endpoint = endpoint;
        this.commandTimeout = commandTimeout;
        this.client = client;
        this.connection = connection;
        this.commands = commands;
        this.asyncCommands = asyncCommands;
    }

    /**
     * Connects to {@code endpoint}.
     *
     * @param resources      Lettuce's client resources (shut down by the caller after {@link #close()})
     * @param commandTimeout bound on each command and on connecting
     * @throws RedisException if Redis cannot be reached; its message names the endpoint without credentials
     */
    public static <K, V> RedisSession<K, V> connect(RedisEndpoint endpoint, RedisCodec<K, V> codec, Duration commandTimeout,
                                                    ClientResources resources) {
        Objects.requireNonNull(endpoint, "endpoint");
        SocketOptions socket = SocketOptions.builder().connectTimeout(commandTimeout).build();
        // the sync API bounds each call by the command timeout itself: no timer task per command
        TimeoutOptions timeouts = TimeoutOptions.builder().timeoutCommands(false).build();
        endpoint.uris().forEach(u -> u.setTimeout(commandTimeout));
        try {
            if (endpoint.topology() == RedisEndpoint.Topology.CLUSTER) {
                RedisClusterClient client = RedisClusterClient.create(resources, endpoint.uris());
                client.setOptions(ClusterClientOptions.builder()
                        // The connection to each node opens on its first command (and again after a failover), so
                        // commands are accepted while it connects; each is cancelled at the command timeout if it
                        // could not be written by then, so none runs late.
                        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.ACCEPT_COMMANDS)
                        .socketOptions(socket).timeoutOptions(TimeoutOptions.enabled(commandTimeout))
                        .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                                .enablePeriodicRefresh(Duration.ofSeconds(PERIODIC_REFRESH_S))
                                .enableAllAdaptiveRefreshTriggers()
                                .adaptiveRefreshTriggersTimeout(Duration.ofMillis(500))
                                .refreshTriggersReconnectAttempts(2)
                                .build())
                        .build());
                try {
                    StatefulRedisClusterConnection<K, V> c = client.connect(codec);
                    c.setTimeout(commandTimeout);
                    return new RedisSession<>(endpoint, commandTimeout, client, c, c.sync(), c.async());
                } catch (RuntimeException e) {
                    shutdownAfterHandshakeTimeout(client, commandTimeout);
                    throw e;
                }
            }
            RedisURI uri = endpoint.uris().get(0);
            RedisClient client = RedisClient.create(resources, uri);
            client.setOptions(ClientOptions.builder()
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                    .socketOptions(socket).timeoutOptions(timeouts).build());
            try {
                StatefulRedisConnection<K, V> c = client.connect(codec);
                c.setTimeout(commandTimeout);
                return new RedisSession<>(endpoint, commandTimeout, client, c, c.sync(), c.async());
            } catch (RuntimeException e) {
                shutdownAfterHandshakeTimeout(client, commandTimeout);
                throw e;
            }
        } catch (RedisException e) {
            throw new RedisException("cannot connect to Redis at " + endpoint + ": " + safeCause(e, endpoint), e);
        }
    }

    /** The exception's own message if it does not repeat a credential-bearing URI, else its type. */
    private static String safeCause(Throwable e, RedisEndpoint endpoint) {
        String m = String.valueOf(e.getMessage());
        return endpoint.leaksCredentials(m) ? e.getClass().getSimpleName() : m;
    }

    /** The synchronous commands, routed by key on a cluster. */
    public RedisClusterCommands<K, V> sync() {
        return commands;
    }

    /**
     * The asynchronous commands of the same connection, routed by key on a cluster; for writes that must not block
     * their caller (e.g. a producer callback thread). Not bounded by the synchronous timeout: bound them with
     * the returned future or rely on Lettuce's command timeout (enabled on a cluster).
     */
    public RedisClusterAsyncCommands<K, V> async() {
        return asyncCommands;
    }

    /**
     * One field of {@code INFO <section>} on every primary (each cluster primary, or the one server), by
     * {@code host:port}; a node whose INFO fails (or lacks the field) is left out. Reads only; for start-up checks.
     */
    public Map<String, String> infoOfPrimaries(String section, String field) {
        Map<String, String> out = new TreeMap<>();
        primaries().forEach((where, node) -> {
            try {
                fieldOf(node.get().info(section), field).ifPresent(v -> out.put(where, v));
            } catch (RedisException e) {
                // that node is not reachable now: nothing known about it
            }
        });
        return out;
    }

    /**
     * Each primary (each cluster primary serving slots, or the one server) by {@code host:port}, with what opens its
     * commands (a cluster node's connection is opened when asked, so an unreachable node fails there).
     */
    private Map<String, java.util.function.Supplier<RedisClusterCommands<K, V>>> primaries() {
        Map<String, java.util.function.Supplier<RedisClusterCommands<K, V>>> out = new java.util.LinkedHashMap<>();
        if (connection instanceof StatefulRedisClusterConnection<K, V> cluster) {
            for (RedisClusterNode node : cluster.getPartitions()) {
                if (node.is(RedisClusterNode.NodeFlag.UPSTREAM) && !node.hasNoSlots()) {
                    out.put(node.getUri().getHost() + ":" + node.getUri().getPort(),
                            () -> cluster.getConnection(node.getNodeId()).sync());
                }
            }
        } else {
            out.put(endpoint.toString(), () -> commands);
        }
        return out;
    }

    /**
     * One PING to every primary (each cluster primary serving slots, or the one server; through Sentinel, the master it
     * named), each bounded by the command timeout.
     *
     * @throws RedisException the first node's failure (the nodes after it are not asked)
     */
    public void pingPrimaries() {
        primaries().values().forEach(node -> node.get().ping());
    }

    /** The value of {@code field:} in an INFO reply. */
    public static Optional<String> fieldOf(String info, String field) {
        if (info != null) {
            for (String line : info.split("\r?\n")) {
                if (line.startsWith(field + ":")) {
                    return Optional.of(line.substring(field.length() + 1).trim());
                }
            }
        }
        return Optional.empty();
    }

    /** Where this session is connected. */
    public RedisEndpoint endpoint() {
        return endpoint;
    }

    /** True on a Redis Cluster. */
    public boolean isCluster() {
        return endpoint.topology() == RedisEndpoint.Topology.CLUSTER;
    }

    /**
     * Closes the connection (its reconnects stop), then shuts the client down in the background as
     * {@link #shutdownAfterHandshakeTimeout} does (a reconnect attempt may be in flight). The resources' owner shuts
     * them down after this: their timer stops first, which cancels the handshake timeouts still pending.
     */
    @Override
    public void close() {
        connection.close();
        shutdownAfterHandshakeTimeout(client, commandTimeout);
    }

    /**
     * Shuts {@code client} down without blocking the caller, its event loop kept until every handshake timeout of its
     * connection attempts has fired. Lettuce schedules that timeout (the command timeout) on the resources' timer
     * when a channel registers and does not cancel it when the connect is refused; when it fires it closes the
     * channel and adds a listener on the channel's event loop. Shut down at once (the old {@code shutdown(0, 1 s)}),
     * that loop was gone by then and Netty logged {@code ERROR DefaultPromise.rejectedExecution ... Event loop shut
     * down?} with a stack trace per attempt: the sent marks, whose resources live on, tried to connect on every read
     * while Redis was down (246 such errors in 16 s). The quiet period keeps the loop until no task ran on it for the
     * handshake timeout plus {@link #HANDSHAKE_MARGIN}, bounded by a further second.
     */
    static void shutdownAfterHandshakeTimeout(AbstractRedisClient client, Duration commandTimeout) {
        long quietMs = commandTimeout.plus(HANDSHAKE_MARGIN).toMillis();
        client.shutdownAsync(quietMs, quietMs + 1000, java.util.concurrent.TimeUnit.MILLISECONDS);
    }
}
