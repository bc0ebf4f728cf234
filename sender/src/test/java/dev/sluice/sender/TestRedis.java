package dev.sluice.sender;

import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;

/**
 * A real redis-server process on a free port without persistence, for integration tests; stopped
 * through its own process handle.
 */
public final class TestRedis implements AutoCloseable {
    private final Process process;
    private final int port;

    private TestRedis(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    public static TestRedis start() {
        String binary = new File("/usr/bin/redis-server").canExecute() ? "/usr/bin/redis-server" : "redis-server";
        int port = freePort();
        try {
            Process p = new ProcessBuilder(binary, "--port", Integer.toString(port), "--bind", "127.0.0.1",
                    "--save", "", "--appendonly", "no")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            TestRedis redis = new TestRedis(p, port);
            RedisClient client = RedisClient.create(redis.url());
            try {
                await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> {
                    try (StatefulRedisConnection<String, String> c = client.connect()) {
                        return "PONG".equals(c.sync().ping());
                    }
                });
            } finally {
                client.shutdown();
            }
            return redis;
        } catch (IOException e) {
            throw new IllegalStateException("cannot start redis-server", e);
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    @Override
    public void close() {
        process.destroy();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
