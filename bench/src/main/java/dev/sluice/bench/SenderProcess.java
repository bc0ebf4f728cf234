package dev.sluice.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One sender instance as its own JVM: {@code java -cp <this classpath> dev.sluice.app.SluiceCli sender -D k=v ...}
 * (the {@code sluice sender} subcommand). Settings go on the command line; bot tokens only in the child's
 * environment ({@code SLUICE_BOT_<ID>_TOKEN}), never in arguments, so {@code ps} does not show them. Output
 * goes to {@code <instance>.log} in the work directory. Stopped by PID: {@link #close} sends SIGTERM (the
 * sender closes cleanly), {@link #kill9} SIGKILL ({@link Process#destroyForcibly()}).
 */
public final class SenderProcess implements AutoCloseable {
    /**
     * What a child runs: its main class and the arguments before the settings, the line it prints once it runs, and
     * extra JVM options (e.g. {@code -XX:StartFlightRecording=...} for {@code --jfr}; {@code {instance}} in them is
     * replaced by the instance id).
     */
    public record Kind(String mainClass, List<String> mainArgs, String readyLine, List<String> jvmArgs) {
        /** {@code sluice sender} (app's SluiceCli): the real sender. */
        public static final Kind SLUICE = new Kind("dev.sluice.app.SluiceCli", List.of("sender"), "sluice sender: running",
                List.of());
        /** Issue 19's bare baseline ({@link BareSender}). */
        public static final Kind BARE = new Kind(BareSender.class.getName(), List.of(), BareSender.READY_LINE, List.of());

        public Kind withJvmArgs(List<String> more) {
            List<String> all = new ArrayList<>(jvmArgs);
            all.addAll(more);
            return new Kind(mainClass, mainArgs, readyLine, List.copyOf(all));
        }
    }

    private final String instanceId;
    private final Process process;
    private final Path log;
    private final String readyLine;

    private SenderProcess(String instanceId, Process process, Path log, String readyLine) {
        this.instanceId = instanceId;
        this.process = process;
        this.log = log;
        this.readyLine = readyLine;
    }

    /**
     * Starts the child; {@link #awaitReady} waits until it runs (start several, then wait for all).
     *
     * @param settings sender config keys (see SenderConfig), without tokens
     * @param tokens   bot id → token, passed as environment variables
     */
    public static SenderProcess start(String instanceId, Map<String, String> settings, Map<String, String> tokens,
                                      Path workDir, String heap) throws IOException, InterruptedException {
        return start(Kind.SLUICE, instanceId, settings, tokens, workDir, heap);
    }

    /** As {@link #start(String, Map, Map, Path, String)}, running {@code kind}. */
    public static SenderProcess start(Kind kind, String instanceId, Map<String, String> settings, Map<String, String> tokens,
                                      Path workDir, String heap) throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // -Dsluice.bench.sender.gc picks the children's collector (default Serial); each child logs its GC pauses
        // to <instance>-gc.log, so a late send can be matched with a pause.
        String gc = System.getProperty("sluice.bench.sender.gc", "-XX:+UseSerialGC");
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx" + heap, gc,
                "-Xlog:gc:file=" + workDir.resolve(instanceId + "-gc.log"),
                "-Dorg.apache.avro.SERIALIZABLE_PACKAGES=dev.sluice.avro"));
        kind.jvmArgs().forEach(a -> cmd.add(a.replace("{instance}", instanceId)));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), kind.mainClass()));
        cmd.addAll(kind.mainArgs());
        settings.forEach((k, v) -> {
            cmd.add("-D");
            cmd.add(k + "=" + v);
        });
        cmd.add("-D");
        cmd.add("sender.instance.id=" + instanceId);
        Path log = workDir.resolve(instanceId + ".log");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        tokens.forEach((bot, token) -> pb.environment().put("SLUICE_BOT_" + bot.toUpperCase() + "_TOKEN", token));
        Process process = pb.start();
        // the bench JVM ending for any reason (an exception, Ctrl-C) takes its children with it
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly, "stop-" + instanceId));
        return new SenderProcess(instanceId, process, log, kind.readyLine());
    }

    /** Waits (bounded) until the child printed that it runs. */
    public void awaitReady(Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(instanceId + " exited with " + process.exitValue() + "; see " + log + ":\n" + tail());
            }
            if (Files.exists(log) && Files.readString(log).contains(readyLine)) {
                return;
            }
            Thread.sleep(100); // polling the child's log for its start line, bounded by the deadline
        }
        throw new IllegalStateException(instanceId + " did not start within " + timeout + "; see " + log + ":\n" + tail());
    }

    private String tail() {
        try {
            String s = Files.readString(log);
            return s.substring(Math.max(0, s.length() - 3000));
        } catch (IOException e) {
            return "(no log)";
        }
    }

    public String instanceId() {
        return instanceId;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** CPU time (user + system) the child used so far, from the OS; zero once it has exited. */
    public Duration cpu() {
        return process.toHandle().info().totalCpuDuration().orElse(Duration.ZERO);
    }

    /** {@code kill -9}: no shutdown hook, no commit, no results of what is in flight. */
    public void kill9() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** SIGTERM, then SIGKILL after 20 s. */
    @Override
    public void close() throws InterruptedException {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
