package dev.sluice.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * What redis-server itself reports, over a plain socket (so the probe adds no client library traffic):
 * {@code INFO} fields (CPU seconds, command stats) and a {@code MONITOR} sample that counts the commands
 * clients sent. Redis counts the calls a Lua script makes as commands too ({@code INFO commandstats},
 * {@code total_commands_processed}); MONITOR marks those {@code [0 lua]}, so only MONITOR separates the
 * round trips clients made from the work inside scripts. MONITOR costs the server time, so CPU is
 * measured outside the sample.
 */
public final class RedisProbe {
    private final String host;
    private final int port;

    public RedisProbe(String host, int port) {
        this.host = host;
        this.port = port;
    }

    public String host() {
        return host;
    }

    public int port() {
        return port;
    }

    /** {@code INFO <section>} as key → value. */
    public Map<String, String> info(String section) throws IOException {
        try (Socket s = new Socket(host, port)) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write(("INFO " + section + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
            String header = in.readLine(); // $<length>
            if (header == null || !header.startsWith("$")) {
                throw new IOException("unexpected INFO answer: " + header);
            }
            int length = Integer.parseInt(header.substring(1));
            char[] buf = new char[length];
            int read = 0;
            while (read < length) {
                int n = in.read(buf, read, length - read);
                if (n < 0) {
                    break;
                }
                read += n;
            }
            Map<String, String> m = new HashMap<>();
            for (String line : new String(buf, 0, read).split("\r\n")) {
                int c = line.indexOf(':');
                if (c > 0 && !line.startsWith("#")) {
                    m.put(line.substring(0, c), line.substring(c + 1));
                }
            }
            return m;
        }
    }

    /** Seconds of CPU (user + system) redis-server used so far. */
    public double cpuSeconds() throws IOException {
        Map<String, String> cpu = info("cpu");
        return Double.parseDouble(cpu.get("used_cpu_user")) + Double.parseDouble(cpu.get("used_cpu_sys"));
    }

    /** {@code calls} of one command from {@code INFO commandstats} (e.g. {@code evalsha}); 0 if never called. */
    public long calls(String command) throws IOException {
        String v = info("commandstats").get("cmdstat_" + command);
        if (v == null) {
            return 0;
        }
        for (String part : v.split(",")) {
            if (part.startsWith("calls=")) {
                return Long.parseLong(part.substring(6));
            }
        }
        return 0;
    }

    /**
     * {@code calls} of every command from {@code INFO commandstats}, clients' and script-internal ones together, except
     * {@code info} (this probe's own); a delta over a window is an upper bound on the client commands in it.
     */
    public long totalCallsExceptInfo() throws IOException {
        long n = 0;
        for (Map.Entry<String, String> e : info("commandstats").entrySet()) {
            if (!e.getKey().startsWith("cmdstat_") || e.getKey().equals("cmdstat_info")) {
                continue;
            }
            for (String part : e.getValue().split(",")) {
                if (part.startsWith("calls=")) {
                    n += Long.parseLong(part.substring(6));
                }
            }
        }
        return n;
    }

    /**
     * Client commands and script-internal calls seen by MONITOR during {@code millis}; {@code byCommand}: the client
     * commands by lower-case name. MONITOR shows every command a client sends (a pipeline's each, MULTI and each queued
     * command, EVALSHA) except those Redis flags admin (CONFIG, CLIENT LIST, ...) and EXEC.
     */
    public record MonitorSample(long clientCommands, long scriptCalls, long startMillis, long millis,
                                Map<String, Long> byCommand) {
        public MonitorSample(long clientCommands, long scriptCalls, long startMillis, long millis) {
            this(clientCommands, scriptCalls, startMillis, millis, Map.of());
        }
    }

    /**
     * Counts, by the server's timestamps on MONITOR lines, what was executed in the {@code millis} after the
     * first line; reads on until a later line arrives (or 2 s pass), so a slow reader loses nothing.
     */
    public MonitorSample monitor(long millis) throws IOException {
        return monitor(-1, millis);
    }

    /**
     * As {@link #monitor(long)}, counting the window {@code [fromMillis, fromMillis + millis)} of the server's clock
     * (epoch ms; the same clock on every local node, so several nodes can be sampled over one window); -1: from the
     * first line.
     */
    public MonitorSample monitor(long fromMillis, long millis) throws IOException {
        try (Socket s = new Socket(host, port)) {
            s.setSoTimeout(200);
            s.getOutputStream().write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8), 1 << 16);
            long clients = 0;
            long scripts = 0;
            Map<String, Long> byCommand = new java.util.TreeMap<>();
            double first = fromMillis < 0 ? -1 : fromMillis / 1000.0;
            long giveUp = Math.max(System.currentTimeMillis(), fromMillis) + millis + 2000;
            while (System.currentTimeMillis() < giveUp) {
                String line;
                try {
                    line = in.readLine();
                } catch (SocketTimeoutException e) {
                    continue;
                }
                if (line == null) {
                    break;
                }
                int space = line.indexOf(' ');
                if (!line.startsWith("+") || line.equals("+OK") || space < 0) {
                    continue;
                }
                double ts = Double.parseDouble(line.substring(1, space));
                if (first < 0) {
                    first = ts;
                }
                if (ts < first) {
                    continue;
                }
                if (ts > first + millis / 1000.0) {
                    break;
                }
                if (line.contains(" lua] ")) {
                    scripts++;
                } else {
                    clients++;
                    byCommand.merge(commandOf(line), 1L, Long::sum);
                }
            }
            return new MonitorSample(clients, scripts, (long) (first * 1000), millis, byCommand);
        }
    }

    /** The command name of a MONITOR line ({@code +ts [db addr] "name" "arg" ...}), lower case. */
    static String commandOf(String line) {
        int bracket = line.indexOf("] \"");
        if (bracket < 0) {
            return "?";
        }
        int start = bracket + 3;
        int end = line.indexOf('"', start);
        return end < 0 ? "?" : line.substring(start, end).toLowerCase(java.util.Locale.ROOT);
    }

    // over every shard of a run (issue 17/19: a standalone server is one shard, a cluster one per primary)

    /** redis-server CPU seconds (INFO cpu) summed over every shard. */
    static double cpuSeconds(java.util.List<RedisProbe> shards) throws IOException {
        double s = 0;
        for (RedisProbe p : shards) {
            s += p.cpuSeconds();
        }
        return s;
    }

    static long totalCalls(java.util.List<RedisProbe> shards) throws java.io.IOException {
        long n = 0;
        for (RedisProbe p : shards) {
            n += p.totalCallsExceptInfo();
        }
        return n;
    }

    static long evalCalls(java.util.List<RedisProbe> shards) throws java.io.IOException {
        long n = 0;
        for (RedisProbe p : shards) {
            n += p.calls("evalsha") + p.calls("eval");
        }
        return n;
    }

    /**
     * MONITOR on every node at once (one thread each) over one window of {@code millis}; one node: from its first
     * command, as before there were shards.
     */
    static java.util.List<RedisProbe.MonitorSample> monitorAll(java.util.List<RedisProbe> shards, long millis) throws Exception {
        if (shards.size() == 1) {
            return java.util.List.of(shards.get(0).monitor(millis));
        }
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(shards.size());
        try {
            java.util.List<java.util.concurrent.Future<RedisProbe.MonitorSample>> futures = new java.util.ArrayList<>();
            long from = System.currentTimeMillis() + 300; // one window on every node, after each MONITOR started
            for (RedisProbe p : shards) {
                futures.add(pool.submit(() -> p.monitor(from, millis)));
            }
            java.util.List<RedisProbe.MonitorSample> out = new java.util.ArrayList<>();
            for (var f : futures) {
                out.add(f.get(millis + 10_000, java.util.concurrent.TimeUnit.MILLISECONDS));
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }
}
