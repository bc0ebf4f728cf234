package dev.sluice.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Redis server for tests: either an external one (from {@code REDIS_URL}) or a {@code redis-server}
 * child process this JVM started on 127.0.0.1 without persistence. Obtain one from {@link RedisLauncher}.
 *
 * <p>A started process is stopped only through its own {@link Process} handle: {@code destroy()}
 * (SIGTERM), then {@code destroyForcibly()} after {@value #STOP_GRACE_SECONDS} s. A JVM shutdown hook
 * stops it too if {@link #close()} was never called, and a {@link ParentDeathWatchdog} when the JVM is killed (kill -9); an owner that stops its parts in order in a shutdown hook of its
 * own calls {@link #stopOnExitOnlyAfterClose(Duration)}, so that this hook does not race it. The password, if any, is never in
 * {@link #url()} or {@link #toString()}; read it with {@link #password()}.
 */
public final class RedisInstance implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RedisInstance.class);
    private static final long STOP_GRACE_SECONDS = 5;
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(15);
    private static final int START_ATTEMPTS = 3;

    /** Where the server comes from. */
    public enum Source { EXTERNAL_URL, PATH_BINARY, BUNDLED_BINARY }

    private final Source source;
    private final String host;
    private final int port;
    private final String url;
    private final Path binary;
    private final String password;
    private final Path workDir;
    /** A data dir given by the caller: the server persists to it (append-only file) and close() keeps it. */
    private boolean persistent;
    private Process process;
    /** Stops the process when this JVM ends without closing it, kill -9 included; null without a shell. */
    private ParentDeathWatchdog watchdog;
    private Thread shutdownHook;
    private boolean closed;
    /** Counted down when {@link #close()} has stopped the server; the JVM exit hook may wait on it. */
    private final CountDownLatch closedLatch = new CountDownLatch(1);
    /** How long the JVM exit hook waits for {@link #close()} before stopping the server itself; zero: not at all. */
    private volatile Duration exitWaitForClose = Duration.ZERO;

    private RedisInstance(Source source, String host, int port, String url, Path binary, String password, Path workDir) {
        this.source = source;
        this.host = host;
        this.port = port;
        this.url = url;
        this.binary = binary;
        this.password = password;
        this.workDir = workDir;
    }

    static RedisInstance external(URI uri) {
        int port = uri.getPort() == -1 ? 6379 : uri.getPort();
        String password = null;
        if (uri.getUserInfo() != null) {
            String info = uri.getUserInfo();
            password = info.contains(":") ? info.substring(info.indexOf(':') + 1) : info;
        }
        String cleanUrl = uri.getScheme() + "://" + uri.getHost() + ":" + port + (uri.getPath() == null ? "" : uri.getPath());
        return new RedisInstance(Source.EXTERNAL_URL, uri.getHost(), port, cleanUrl, null,
                password == null || password.isEmpty() ? null : password, null);
    }

    static RedisInstance startProcess(Path binary, String password) {
        return startProcess(binary, password, 0, null);
    }

    /**
     * @param fixedPort the port to listen on, or 0 for a free one (then a taken port is retried with another)
     * @param dataDir null for a temporary dir deleted on close; else the server keeps its data there (append-only
     *     file, fsync every second) and {@link #close()} leaves it, so a later start on the same dir finds the keys
     */
    static RedisInstance startProcess(Path binary, String password, int fixedPort, Path dataDir) {
        Source source = RedisLauncher.findOnPath("redis-server").filter(binary::equals).isPresent()
                ? Source.PATH_BINARY : Source.BUNDLED_BINARY;
        RuntimeException last = null;
        int attempts = fixedPort > 0 ? 1 : START_ATTEMPTS;
        for (int attempt = 1; attempt <= attempts; attempt++) {
            int port = fixedPort > 0 ? fixedPort : Ports.freePort();
            Path workDir;
            try {
                workDir = dataDir != null ? Files.createDirectories(dataDir) : Files.createTempDirectory("sluice-redis-");
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create a dir for redis-server", e);
            }
            RedisInstance instance = new RedisInstance(source, "127.0.0.1", port,
                    "redis://127.0.0.1:" + port, binary, password, workDir);
            instance.persistent = dataDir != null;
            try {
                instance.startProcess();
                instance.shutdownHook = new Thread(instance::onJvmExit, "sluice-redis-stop-" + port);
                Runtime.getRuntime().addShutdownHook(instance.shutdownHook);
                LOG.info("redis-server ({}) started on 127.0.0.1:{}", source, port);
                return instance;
            } catch (RuntimeException e) {
                // most likely the just-probed free port was taken meanwhile: try a fresh one
                last = e;
                instance.stopQuietly();
                if (dataDir == null) {
                    RedisCluster.deleteRecursively(workDir);
                }
                LOG.warn("redis-server start attempt {} on port {} failed: {}", attempt, port, e.getMessage());
            }
        }
        throw new IllegalStateException("redis-server did not start after " + START_ATTEMPTS + " attempts", last);
    }

    private synchronized void startProcess() {
        List<String> cmd = new ArrayList<>(List.of(binary.toString(),
                "--port", String.valueOf(port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", persistent ? "yes" : "no",
                "--appendfsync", "everysec",
                "--daemonize", "no",
                "--dir", workDir.toString()));
        if (password != null) {
            cmd.add("--requirepass");
            cmd.add(password);
        }
        Path log = workDir.resolve("redis.log");
        ProcessBuilder builder = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + binary + ": " + e.getMessage(), e);
        }
        watchdog = ParentDeathWatchdog.watch(process).orElse(null);
        awaitPong(log);
    }

    private void awaitPong(Path log) {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("redis-server exited with " + process.exitValue()
                        + " on port " + port + "; log: " + tail(log));
            }
            if (ping()) {
                return;
            }
            try {
                Thread.sleep(20); // bounded poll of a condition
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for redis-server", e);
            }
        }
        throw new IllegalStateException("redis-server on port " + port + " did not answer PING within "
                + READY_TIMEOUT + "; log: " + tail(log));
    }

    /**
     * Sends {@code PING} (after {@code AUTH} if a password is set) over a raw socket.
     *
     * @return true if the server answered {@code +PONG} within one second
     */
    public boolean ping() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 1000);
            socket.setSoTimeout(1000);
            OutputStream out = socket.getOutputStream();
            StringBuilder request = new StringBuilder();
            if (password != null) {
                request.append(resp("AUTH", password));
            }
            request.append(resp("PING"));
            out.write(request.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = socket.getInputStream();
            if (password != null && !readLine(in).startsWith("+OK")) {
                return false;
            }
            return readLine(in).equals("+PONG");
        } catch (IOException e) {
            return false;
        }
    }

    private static String resp(String... parts) {
        StringBuilder sb = new StringBuilder("*").append(parts.length).append("\r\n");
        for (String part : parts) {
            sb.append('$').append(part.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(part).append("\r\n");
        }
        return sb.toString();
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) != -1 && c != '\n') {
            if (c != '\r') {
                sb.append((char) c);
            }
        }
        return sb.toString();
    }

    /** {@code redis://host:port} (no credentials; see {@link #password()}). */
    public String url() {
        return url;
    }

    /** Host name or address of the server. */
    public String host() {
        return host;
    }

    /** TCP port of the server. */
    public int port() {
        return port;
    }

    /** The password the server requires, if any. */
    public Optional<String> password() {
        return Optional.ofNullable(password);
    }

    /** Where this server comes from. */
    public Source source() {
        return source;
    }

    /** True for a child process this instance controls (stop/restart allowed). */
    public boolean isManaged() {
        return source != Source.EXTERNAL_URL;
    }

    /** The managed redis-server's process id, or -1 (external server, or not running). */
    public synchronized long pid() {
        return process != null && process.isAlive() ? process.pid() : -1;
    }

    /** True while the managed process is alive (always true for an external server). */
    public synchronized boolean isRunning() {
        return !isManaged() || (process != null && process.isAlive());
    }

    /**
     * Stops the process to simulate an outage (SIGTERM, then SIGKILL after a grace period); the port
     * stays reserved for {@link #restart()}.
     *
     * @throws UnsupportedOperationException for an external server (REDIS_URL)
     */
    public synchronized void stop() {
        requireManaged("stop");
        stopQuietly();
    }

    /**
     * Starts the process again on the same port (stopping it first if it runs) and waits for PING.
     * Data is gone: there is no persistence.
     *
     * @throws UnsupportedOperationException for an external server (REDIS_URL)
     * @throws IllegalStateException if it does not come back (e.g. the port was taken meanwhile)
     */
    public synchronized void restart() {
        requireManaged("restart");
        if (closed) {
            throw new IllegalStateException("redis instance is closed");
        }
        stopQuietly();
        startProcess();
        LOG.info("redis-server restarted on 127.0.0.1:{}", port);
    }

    private void requireManaged(String what) {
        if (!isManaged()) {
            throw new UnsupportedOperationException("cannot " + what + " an external Redis from " + RedisLauncher.REDIS_URL_ENV
                    + "; use RedisLauncher.localProcess() for outage tests");
        }
    }

    /**
     * For an owner that stops this server itself, in order, from its own shutdown hook (e.g. {@code sluice dev}: the
     * senders first, then the topology, then Redis): on JVM exit this instance's hook then waits up to {@code bound}
     * for {@link #close()} instead of stopping the server at once, which would race the owner (the senders would
     * lose Redis while still sending). If close() does not come within the bound (the JVM exits without the owner
     * closing), the hook still stops the leftover server.
     *
     * @return this
     */
    public RedisInstance stopOnExitOnlyAfterClose(Duration bound) {
        if (bound.isNegative()) {
            throw new IllegalArgumentException("bound " + bound + ": expected zero or more");
        }
        exitWaitForClose = bound;
        return this;
    }

    /** What the JVM shutdown hook runs (package-private for tests). */
    void onJvmExit() {
        Duration wait = exitWaitForClose;
        if (!wait.isZero()) {
            try {
                if (closedLatch.await(wait.toMillis(), TimeUnit.MILLISECONDS)) {
                    return; // the owner closed it, in its order
                }
                LOG.warn("redis-server on port {} not closed by its owner within {}; stopping it", port, wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        stopQuietly();
    }

    private synchronized void stopQuietly() {
        if (watchdog != null) {
            watchdog.disarm(); // first: it must never signal a PID this stop may free for reuse
            watchdog = null;
        }
        Process p = process;
        if (p == null || !p.isAlive()) {
            return;
        }
        p.destroy();
        try {
            if (!p.waitFor(STOP_GRACE_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                if (!p.waitFor(STOP_GRACE_SECONDS, TimeUnit.SECONDS)) {
                    LOG.warn("redis-server pid {} did not exit after SIGKILL", p.pid());
                }
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** Stops a managed process and deletes its work dir; an external server is left alone. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (!isManaged()) {
            closedLatch.countDown();
            return;
        }
        stopQuietly();
        closedLatch.countDown();
        if (shutdownHook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException e) {
                // JVM already shutting down: the hook runs anyway
            }
        }
        if (!persistent) {
            RedisCluster.deleteRecursively(workDir);
        }
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
        } catch (IOException e) {
            return "(no log)";
        }
    }

    @Override
    public String toString() {
        return "RedisInstance[" + source + " " + url + (password != null ? " (password set)" : "") + "]";
    }
}
