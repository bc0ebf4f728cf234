package dev.sluice.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.Map;

/**
 * Counts the commands redis-server executed (INFO commandstats; calls inside scripts included), INFO excluded, and the
 * CPU used (split out of {@link BudgetVsBucket4j}, unchanged).
 *
 * <p>Thread: one caller at a time (the bench's main thread); the Lettuce connection is its only state.
 */
final class CommandStats implements AutoCloseable {
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;

    CommandStats(String url) {
        this.client = RedisClient.create(url);
        this.connection = client.connect();
    }

    /** Calls per command name (lower case, e.g. {@code evalsha}) so far. */
    Map<String, Long> topLevelCalls() {
        Map<String, Long> out = new java.util.HashMap<>();
        for (String line : connection.sync().info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_")) {
                int colon = line.indexOf(':');
                int at = line.indexOf("calls=");
                int end = line.indexOf(',', at);
                out.put(line.substring(8, colon), Long.parseLong(line.substring(at + 6, end)));
            }
        }
        return out;
    }

    /** CPU used so far by redis-server (INFO cpu, user + sys) and by this JVM (process CPU time), µs. */
    DecisionLoad.Cpu cpu() {
        double redisSeconds = 0;
        for (String line : connection.sync().info("cpu").split("\r?\n")) {
            if (line.startsWith("used_cpu_user:") || line.startsWith("used_cpu_sys:")) {
                redisSeconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        long execMicros = 0;
        for (String line : connection.sync().info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_") && !line.startsWith("cmdstat_info:")) {
                int at = line.indexOf("usec=");
                execMicros += Long.parseLong(line.substring(at + 5, line.indexOf(',', at)));
            }
        }
        long jvmNanos = ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getProcessCpuTime();
        // Lettuce's I/O threads (netty event loops): encoding, writes, reads, decoding and completing futures
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long loopNanos = 0;
        for (java.lang.management.ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t != null && t.getThreadName().contains("EventLoop")) {
                loopNanos += Math.max(0, threads.getThreadCpuTime(t.getThreadId()));
            }
        }
        return new DecisionLoad.Cpu(Math.round(redisSeconds * 1e6), jvmNanos / 1000, loopNanos / 1000, execMicros);
    }

    long commands() {
        long total = 0;
        for (String line : connection.sync().info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_") && !line.startsWith("cmdstat_info:")) {
                int at = line.indexOf("calls=");
                int end = line.indexOf(',', at);
                total += Long.parseLong(line.substring(at + 6, end));
            }
        }
        return total;
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown();
    }
}
