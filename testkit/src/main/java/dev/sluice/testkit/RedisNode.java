package dev.sluice.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code redis-server} process of a {@link RedisCluster} or a {@link RedisSentinels} set: a fixed
 * 127.0.0.1 port, its own work directory (where a cluster node keeps {@code nodes.conf} and a Sentinel its
 * config file, so a node started again rejoins as what it was), and the arguments it was started with.
 * Stopped only through its own {@link Process} handle: {@link #kill9()} (SIGKILL, a crash) or
 * {@link #stop()} (SIGTERM, then SIGKILL). Methods are {@code synchronized}: the test thread and a
 * shutdown hook may both stop it.
 */
public final class RedisNode {
    private static final Logger LOG = LoggerFactory.getLogger(RedisNode.class);
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(15);
    private static final int BIND_ATTEMPTS = 5;

    private final String role;
    private final int port;
    private final Path dir;
    private final List<String> command;
    private Process process;

    RedisNode(String role, int port, Path dir, List<String> command) {
        this.role = role;
        this.port = port;
        this.dir = dir;
        this.command = List.copyOf(command);
    }

    /**
     * Starts a node: {@code redis-server} with {@code args} (after {@code firstArgs}, e.g. a config file), on a port that
     * was free a moment ago; a port taken meanwhile (by another test JVM's server or outgoing connection: the cluster
     * ports lie in the ephemeral range) makes it try another, at most {@value #BIND_ATTEMPTS} times.
     */
    static RedisNode start(String role, Path binary, Path parent, List<String> firstArgs, List<String> args) {
        for (int attempt = 1; ; attempt++) {
            try {
                return startOnce(role, binary, parent, firstArgs, args);
            } catch (IllegalStateException e) {
                if (attempt >= BIND_ATTEMPTS || e.getMessage() == null || !e.getMessage().contains("Address already in use")) {
                    throw e;
                }
                LOG.info("{}: its port was taken before it bound it; trying another ({})", role, attempt);
            }
        }
    }

    private static RedisNode startOnce(String role, Path binary, Path parent, List<String> firstArgs, List<String> args) {
        int port = args.contains("--cluster-enabled") ? Ports.freePortWithClusterBus() : Ports.freePort();
        Path dir;
        try {
            dir = Files.createDirectories(parent.resolve(role + "-" + port));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a work dir for redis-server", e);
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(binary.toString());
        cmd.addAll(firstArgs.stream().map(a -> a.replace("{dir}", dir.toString()).replace("{port}", Integer.toString(port))).toList());
        cmd.addAll(List.of("--port", Integer.toString(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--daemonize", "no", "--dir", dir.toString()));
        cmd.addAll(args);
        RedisNode node = new RedisNode(role, port, dir, cmd);
        node.start();
        return node;
    }

    /** Starts the process again with the same arguments, port and work dir (after {@link #kill9()}). */
    public synchronized void start() {
        if (process != null && process.isAlive()) {
            return;
        }
        Path log = dir.resolve("redis.log");
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + command.get(0) + ": " + e.getMessage(), e);
        }
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(role + " on port " + port + " exited with " + process.exitValue() + "; log: " + tail());
            }
            try (Resp r = Resp.connect("127.0.0.1", port)) {
                if ("PONG".equals(r.string("PING"))) {
                    LOG.debug("{} started on 127.0.0.1:{} (pid {})", role, port, process.pid());
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            }
            sleep(20);
        }
        throw new IllegalStateException(role + " on port " + port + " did not answer PING within " + READY_TIMEOUT + "; log: " + tail());
    }

    /** Kills the process with SIGKILL (a crash: nothing is flushed) and waits until it is gone. */
    public synchronized void kill9() {
        Process p = process;
        if (p == null || !p.isAlive()) {
            return;
        }
        p.destroyForcibly();
        waitFor(p);
    }

    /** Stops the process (SIGTERM, SIGKILL after 5 s). Idempotent. */
    public synchronized void stop() {
        Process p = process;
        if (p == null || !p.isAlive()) {
            return;
        }
        p.destroy();
        try {
            if (!p.waitFor(5, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                waitFor(p);
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    private static void waitFor(Process p) {
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                LOG.warn("redis-server pid {} did not exit after SIGKILL", p.pid());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** True while the process runs. */
    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** The process id, or -1 before the first start. */
    public synchronized long pid() {
        return process == null ? -1 : process.pid();
    }

    /** The TCP port (127.0.0.1). */
    public int port() {
        return port;
    }

    /** {@code 127.0.0.1:port}. */
    public String address() {
        return "127.0.0.1:" + port;
    }

    /** What the node is in its set, e.g. {@code cluster-node} or {@code sentinel}. */
    public String role() {
        return role;
    }

    /** Sends one command to this node (a fresh connection) and returns the reply (see {@link Resp}). */
    public Object call(String... command) throws IOException {
        try (Resp r = Resp.connect("127.0.0.1", port)) {
            return r.call(command);
        }
    }

    /** The last lines of the node's log, for failure messages. */
    public String tail() {
        try {
            List<String> lines = Files.readAllLines(dir.resolve("redis.log"));
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
        } catch (IOException e) {
            return "(no log)";
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms); // bounded poll of a condition by the caller
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    @Override
    public String toString() {
        return role + "@" + address();
    }
}
