package dev.sluice.testkit;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import redis.embedded.core.ExecutableProvider;

/**
 * Finds or starts a Redis server for tests and the embedded demo.
 *
 * <p>Order of preference for {@link #start()}:
 * <ol>
 *   <li>environment variable {@code REDIS_URL} (e.g. {@code redis://127.0.0.1:6379}): used as is, never
 *       stopped by Sluice ({@link RedisInstance#stop()} and {@link RedisInstance#restart()} refuse);</li>
 *   <li>{@code redis-server} on the {@code PATH}, started on a free 127.0.0.1 port without persistence
 *       ({@code --save "" --appendonly no});</li>
 *   <li>the binary bundled in {@code com.github.codemonstur:embedded-redis} 1.4.4 (Redis 6.2), same flags.</li>
 * </ol>
 * A started server is a child process stopped only through its own {@link Process} handle.
 *
 * <p>Variants: {@link #withPassword(String)} adds {@code requirepass}; {@link #localProcess()} ignores
 * {@code REDIS_URL} (chaos tests that must stop and restart Redis); {@link #bundledBinary()} skips the PATH.
 */
public final class RedisLauncher {

    /** Environment variable naming an external Redis to use instead of starting one. */
    public static final String REDIS_URL_ENV = "REDIS_URL";

    private final String password;
    private final boolean useEnvUrl;
    private final boolean usePath;

    private RedisLauncher(String password, boolean useEnvUrl, boolean usePath) {
        this.password = password;
        this.useEnvUrl = useEnvUrl;
        this.usePath = usePath;
    }

    /** Starts (or finds, via {@code REDIS_URL}) a Redis without a password; see the class doc for the order. */
    public static RedisInstance start() {
        return new RedisLauncher(null, true, true).launch();
    }

    /**
     * A launcher whose started server requires {@code password} ({@code --requirepass}). With
     * {@code REDIS_URL} set, that URL is used unchanged (it carries its own credentials, if any).
     *
     * @throws IllegalArgumentException if the password is null, empty or contains whitespace
     */
    public static RedisLauncher withPassword(String password) {
        if (password == null || password.isEmpty() || password.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException("password: must be non-empty without whitespace");
        }
        return new RedisLauncher(password, true, true);
    }

    /** A launcher that ignores {@code REDIS_URL} and always starts its own process (PATH, then bundled). */
    public static RedisLauncher localProcess() {
        return new RedisLauncher(null, false, true);
    }

    /** A launcher that ignores {@code REDIS_URL} and the PATH and runs the binary bundled in embedded-redis. */
    public static RedisLauncher bundledBinary() {
        return new RedisLauncher(null, false, false);
    }

    /** The same launcher, requiring {@code password}. */
    public RedisLauncher password(String password) {
        RedisLauncher checked = withPassword(password);
        return new RedisLauncher(checked.password, useEnvUrl, usePath);
    }

    /** The same launcher, ignoring {@code REDIS_URL}. */
    public RedisLauncher ignoringRedisUrl() {
        return new RedisLauncher(password, false, usePath);
    }

    /**
     * Starts or finds Redis as configured.
     *
     * @throws IllegalStateException if {@code REDIS_URL} is malformed or no server could be started
     */
    public RedisInstance launch() {
        if (useEnvUrl) {
            String envUrl = System.getenv(REDIS_URL_ENV);
            if (envUrl != null && !envUrl.isBlank()) {
                return RedisInstance.external(parse(envUrl.trim()));
            }
        }
        Path binary = usePath ? findOnPath("redis-server").orElseGet(RedisLauncher::bundled) : bundled();
        return RedisInstance.startProcess(binary, password);
    }

    /**
     * Starts a local process (never {@code REDIS_URL}) on a fixed port and, when {@code dataDir} is given, with its
     * data kept there across restarts (append-only file). For {@code sluice dev}.
     *
     * @param port 0 for a free port
     * @param dataDir null for a temporary dir deleted on close
     */
    public RedisInstance launchAt(int port, Path dataDir) {
        Path binary = usePath ? findOnPath("redis-server").orElseGet(RedisLauncher::bundled) : bundled();
        return RedisInstance.startProcess(binary, password, port, dataDir);
    }

    private static URI parse(String url) {
        try {
            URI uri = URI.create(url);
            if (uri.getHost() == null || !(url.startsWith("redis://") || url.startsWith("rediss://"))) {
                throw new IllegalArgumentException("not redis://host[:port]");
            }
            return uri;
        } catch (IllegalArgumentException e) {
            // the value may hold a password: name the key, not the value
            throw new IllegalStateException(REDIS_URL_ENV + ": not a valid redis:// URL (" + e.getMessage() + ")", e);
        }
    }

    /** {@code name} on the PATH, unless {@link HostBinaries#HIDE_ENV} hides it (see {@link HostBinaries}). */
    static Optional<Path> findOnPath(String name) {
        return HostBinaries.find(name);
    }

    /**
     * The {@code redis-server} binary that {@link #start()} would run: the one on the PATH, else the one
     * bundled in embedded-redis (Redis 6.2, built with TLS and cluster support). For tests that start
     * redis-server with options of their own (TLS, cluster mode, Sentinel).
     */
    public static Path serverBinary() {
        return findOnPath("redis-server").orElseGet(RedisLauncher::bundled);
    }

    private static Path bundled() {
        try {
            File file = ExecutableProvider.newJarResourceProvider().get();
            if (!file.canExecute() && !file.setExecutable(true)) {
                throw new IllegalStateException("bundled redis-server at " + file + " is not executable");
            }
            return file.toPath();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot extract the redis-server bundled in embedded-redis", e);
        }
    }
}
