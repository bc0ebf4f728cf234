package dev.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A PostgreSQL server started by {@link PostgresLauncher}: its own data dir in a temp dir, 127.0.0.1 on a free
 * port, trust authentication for user {@value #USER}, no durability (fsync off: a test database). Stopped by
 * its PID only: {@link #stop()} sends SIGINT (PostgreSQL's fast shutdown: open sessions are ended), then
 * SIGKILL after a grace period; {@link #start()} starts it again on the same port and data (an outage
 * test). A JVM shutdown hook stops it if {@link #close()} was never called.
 */
public final class PostgresInstance implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresInstance.class);
    /** The superuser initdb creates; trust auth, no password. */
    public static final String USER = "sluice";
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
    private static final long STOP_GRACE_SECONDS = 10;

    private final Path binDir;
    private final List<String> asUser;
    private final Path workDir;
    private final Path dataDir;
    private final Path log;
    private final int port;
    private Process process;
    private Thread shutdownHook;
    private boolean closed;

    private PostgresInstance(Path binDir, List<String> asUser, Path workDir, int port) {
        this.binDir = binDir;
        this.asUser = asUser;
        this.workDir = workDir;
        this.dataDir = workDir.resolve("data");
        this.log = workDir.resolve("postgres.log");
        this.port = port;
    }

    static PostgresInstance start(Path binDir, List<String> asUser, String ownerUidGid) {
        Path workDir;
        try {
            workDir = Files.createTempDirectory("sluice-pg-");
            if (ownerUidGid != null) {
                String[] ids = ownerUidGid.split(":");
                Files.setAttribute(workDir, "unix:uid", Integer.parseInt(ids[0]));
                Files.setAttribute(workDir, "unix:gid", Integer.parseInt(ids[1]));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temp dir for PostgreSQL", e);
        }
        PostgresInstance pg = new PostgresInstance(binDir, asUser, workDir, Ports.freePort());
        try {
            pg.initdb();
            pg.startServer();
        } catch (RuntimeException e) {
            pg.close();
            throw e;
        }
        pg.shutdownHook = new Thread(pg::stopQuietly, "sluice-postgres-stop-" + pg.port);
        Runtime.getRuntime().addShutdownHook(pg.shutdownHook);
        LOG.info("PostgreSQL started on 127.0.0.1:{} (data {})", pg.port, pg.dataDir);
        return pg;
    }

    private void initdb() {
        List<String> cmd = new ArrayList<>(asUser);
        cmd.addAll(List.of(binDir.resolve("initdb").toString(), "-D", dataDir.toString(), "-U", USER,
                "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"));
        Path initLog = workDir.resolve("initdb.log");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(initLog.toFile())).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("initdb did not finish within 60 s; log: " + tail(initLog));
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException("initdb exited with " + p.exitValue() + "; log: " + tail(initLog));
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run initdb: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted during initdb", e);
        }
    }

    private synchronized void startServer() {
        List<String> cmd = new ArrayList<>(asUser);
        cmd.addAll(List.of(binDir.resolve("postgres").toString(), "-D", dataDir.toString(), "-p", Integer.toString(port),
                "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + workDir,
                "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                "-c", "max_connections=40", "-c", "shared_buffers=16MB"));
        try {
            process = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot run postgres: " + e.getMessage(), e);
        }
        awaitReady();
    }

    private void awaitReady() {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("postgres exited with " + process.exitValue() + "; log: " + tail(log));
            }
            if (logSaysReady() && accepts()) {
                return;
            }
            try {
                Thread.sleep(25); // bounded poll of a condition
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for postgres", e);
            }
        }
        throw new IllegalStateException("postgres on port " + port + " not ready within " + READY_TIMEOUT + "; log: " + tail(log));
    }

    private boolean logSaysReady() {
        try {
            // counts restarts too: ready once there are as many "ready" lines as starts
            long ready = Files.readAllLines(log).stream().filter(l -> l.contains("ready to accept connections")).count();
            long starts = Files.readAllLines(log).stream().filter(l -> l.contains("starting PostgreSQL")).count();
            return ready >= Math.max(1, starts);
        } catch (IOException e) {
            return false;
        }
    }

    private boolean accepts() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** {@code jdbc:postgresql://127.0.0.1:<port>/postgres}; user {@link #USER}, no password. */
    public String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
    }

    public String user() {
        return USER;
    }

    public int port() {
        return port;
    }

    /** The server's PID while it runs. */
    public synchronized long pid() {
        return process.pid();
    }

    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** Stops the server (an outage): SIGINT to its PID, SIGKILL after a grace period. Data stays. */
    public synchronized void stop() {
        stopQuietly();
    }

    /**
     * Starts the stopped server again on the same port and data dir.
     *
     * @throws IllegalStateException if it does not come back (e.g. the port was taken meanwhile)
     */
    public synchronized void start() {
        if (closed) {
            throw new IllegalStateException("postgres instance is closed");
        }
        stopQuietly();
        startServer();
    }

    private synchronized void stopQuietly() {
        Process p = process;
        if (p == null || !p.isAlive()) {
            return;
        }
        try {
            // SIGINT = fast shutdown (SIGTERM would wait for every client to disconnect)
            new ProcessBuilder("kill", "-INT", Long.toString(p.pid())).inheritIO().start().waitFor(5, TimeUnit.SECONDS);
            if (!p.waitFor(STOP_GRACE_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(STOP_GRACE_SECONDS, TimeUnit.SECONDS);
            }
        } catch (IOException e) {
            p.destroyForcibly();
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** Stops the server and deletes its data. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        stopQuietly();
        if (shutdownHook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException e) {
                // JVM already shutting down
            }
        }
        try (Stream<Path> paths = Files.walk(workDir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            LOG.warn("cannot delete PostgreSQL work dir {}: {}", workDir, e.toString());
        }
    }

    private static String tail(Path file) {
        try {
            List<String> lines = Files.readAllLines(file);
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - 8), lines.size()));
        } catch (IOException e) {
            return "(no log)";
        }
    }

    @Override
    public String toString() {
        return "PostgresInstance[" + jdbcUrl() + "]";
    }
}
