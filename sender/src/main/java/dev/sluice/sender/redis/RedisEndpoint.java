package dev.sluice.sender.redis;

import io.lettuce.core.RedisURI;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Where Sluice's Redis is and how it is deployed, parsed from one {@code redis.url} value. The forms:
 * <ul>
 *   <li>{@code redis://[[user]:password@]host[:port][/db]} and {@code rediss://…} (TLS): one server;</li>
 *   <li>{@code redis-sentinel://[[user]:password@]host1:port1,host2:port2[/db]#master} and
 *       {@code rediss-sentinel://…} (TLS to the Sentinels and the data nodes): a primary found through
 *       Sentinel, followed after a failover (Lettuce asks the Sentinels again on every reconnect);</li>
 *   <li>{@code redis-cluster://[[user]:password@]host1:port1,host2:port2} and {@code rediss-cluster://…}: a Redis
 *       Cluster reached through any of these seed nodes; every command is routed to the node that serves its
 *       key's slot (all keys of one Sluice call share the bot's {@code {hash tag}}), MOVED and ASK are
 *       followed and the topology is refreshed after a failover. Lettuce has no URL scheme for a cluster, so
 *       this one is Sluice's.</li>
 * </ul>
 * Query parameters of a single-server or Sentinel URL are Lettuce's (e.g. {@code ?verifyPeer=NONE}); a cluster
 * URL takes {@code verifyPeer} and applies it, and its credentials, to every seed. The password is never in
 * {@link #toString()} nor in an error message. Immutable.
 */
public final class RedisEndpoint {
    /** How the Redis behind an endpoint is deployed. */
    public enum Topology { STANDALONE, SENTINEL, CLUSTER }

    private static final String CLUSTER = "redis-cluster://";
    private static final String CLUSTER_TLS = "rediss-cluster://";

    private final Topology topology;
    private final List<RedisURI> uris;
    private final String redacted;
    private final String userInfo;

    private RedisEndpoint(Topology topology, List<RedisURI> uris, String redacted, String userInfo) {
        this.topology = topology;
        this.uris = List.copyOf(uris);
        this.redacted = redacted;
        this.userInfo = userInfo;
    }

    /**
     * Parses a {@code redis.url} value (see the class doc for the forms).
     *
     * @throws IllegalArgumentException naming the value without its credentials and what is wrong with it
     */
    public static RedisEndpoint parse(String url) {
        Objects.requireNonNull(url, "url");
        String trimmed = url.trim();
        String redacted = redact(trimmed);
        String userInfo = userInfo(trimmed);
        try {
            if (trimmed.startsWith(CLUSTER) || trimmed.startsWith(CLUSTER_TLS)) {
                return new RedisEndpoint(Topology.CLUSTER, clusterSeeds(trimmed, trimmed.startsWith(CLUSTER_TLS)), redacted, userInfo);
            }
            boolean sentinel = trimmed.startsWith("redis-sentinel://") || trimmed.startsWith("rediss-sentinel://");
            if (!sentinel && !trimmed.startsWith("redis://") && !trimmed.startsWith("rediss://")) {
                throw new Invalid("not a redis://, rediss://, redis-sentinel://, rediss-sentinel://, "
                        + "redis-cluster:// or rediss-cluster:// URL");
            }
            if (sentinel && (trimmed.indexOf('#') < 0 || trimmed.substring(trimmed.indexOf('#') + 1).isBlank())) {
                throw new Invalid("a Sentinel URL names its master after '#', e.g. redis-sentinel://host:26379#mymaster");
            }
            RedisURI uri = RedisURI.create(trimmed);
            return new RedisEndpoint(sentinel ? Topology.SENTINEL : Topology.STANDALONE, List.of(uri), redacted, userInfo);
        } catch (Invalid e) {
            throw new IllegalArgumentException("redis URL " + redacted + ": " + e.getMessage());
        } catch (RuntimeException e) {
            // Lettuce's and java.net's messages repeat the whole URL, password included: name only the type.
            throw new IllegalArgumentException("redis URL " + redacted + ": malformed (" + e.getClass().getSimpleName()
                    + "; a '%' in a password must be written %25)");
        }
    }

    private static List<RedisURI> clusterSeeds(String url, boolean tls) {
        String rest = url.substring(url.indexOf("://") + 3);
        String query = "";
        int q = rest.indexOf('?');
        if (q >= 0) {
            query = rest.substring(q + 1);
            rest = rest.substring(0, q);
        }
        if (rest.endsWith("/")) {
            rest = rest.substring(0, rest.length() - 1);
        }
        String user = null;
        String password = null;
        int at = rest.lastIndexOf('@');
        if (at >= 0) {
            String info = rest.substring(0, at);
            rest = rest.substring(at + 1);
            int colon = info.indexOf(':');
            user = colon < 0 ? null : decode(info.substring(0, colon));
            password = decode(colon < 0 ? info : info.substring(colon + 1));
            if (user != null && user.isEmpty()) {
                user = null;
            }
        }
        boolean verifyPeer = true;
        for (String param : query.split("&")) {
            if (param.equalsIgnoreCase("verifyPeer=NONE") || param.equalsIgnoreCase("verifyPeer=false")) {
                verifyPeer = false;
            } else if (!param.isEmpty() && !param.toLowerCase().startsWith("verifypeer=")) {
                throw new Invalid("cluster URL: unknown parameter " + param.replaceAll("=.*", ""));
            }
        }
        List<RedisURI> seeds = new ArrayList<>();
        for (String hostPort : rest.split(",")) {
            URI hp = URI.create("redis://" + hostPort.trim());
            if (hp.getHost() == null) {
                throw new Invalid("cluster URL: a seed is not host:port");
            }
            RedisURI.Builder b = RedisURI.builder().withHost(hp.getHost()).withPort(hp.getPort() < 0 ? 6379 : hp.getPort())
                    .withSsl(tls).withVerifyPeer(verifyPeer);
            if (password != null) {
                b = user == null ? b.withPassword(password.toCharArray()) : b.withAuthentication(user, password.toCharArray());
            }
            seeds.add(b.build());
        }
        if (seeds.isEmpty()) {
            throw new Invalid("cluster URL: no seed node");
        }
        return seeds;
    }

    private static String decode(String s) {
        return java.net.URLDecoder.decode(s.replace("+", "%2B"), java.nio.charset.StandardCharsets.UTF_8);
    }

    /** {@code scheme://user:secret@host} → {@code scheme://[redacted]@host}; other text unchanged. */
    public static String redact(String url) {
        return url == null ? null : url.replaceFirst("^([a-z-]+://).*@", "$1[redacted]@"); // up to the last @: over-redacts, never under
    }

    private static String userInfo(String url) {
        int scheme = url.indexOf("://");
        int at = url.lastIndexOf('@');
        return scheme >= 0 && at > scheme ? url.substring(scheme + 3, at) : "";
    }

    /**
     * Whether {@code text} contains this endpoint's credentials (as written in the URL, or decoded): for
     * messages of third-party exceptions that may repeat them.
     */
    public boolean leaksCredentials(String text) {
        if (text == null || userInfo.isEmpty()) {
            return false;
        }
        String secret = userInfo.substring(userInfo.indexOf(':') + 1);
        return !secret.isEmpty() && (text.contains(secret) || text.contains(decode(secret)));
    }

    /** How the Redis is deployed. */
    public Topology topology() {
        return topology;
    }

    /** The Lettuce URIs: one for a server or a Sentinel set, the seeds of a cluster. Hold credentials. */
    public List<RedisURI> uris() {
        return uris;
    }

    /** The URL without its credentials, for logs and errors. */
    public String redacted() {
        return redacted;
    }

    @Override
    public String toString() {
        return topology + " " + redacted;
    }

    /** A reason of our own, safe to show (it never repeats the URL). */
    private static final class Invalid extends IllegalArgumentException {
        Invalid(String message) {
            super(message);
        }
    }
}
