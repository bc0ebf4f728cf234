package dev.sluice.app.dev;

import dev.sluice.app.ConfigOptions;
import dev.sluice.app.SluiceCli;
import dev.sluice.app.demo.EmbeddedStack;
import dev.sluice.app.demo.LogRouting;
import dev.sluice.app.tools.ToolErrors;
import dev.sluice.app.tools.Verbosity;
import dev.sluice.config.Settings;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code sluice dev}: the pipeline to develop against, running until Ctrl-C (SIGTERM). Starts what {@code sluice demo}
 * starts ({@link EmbeddedStack}: embedded KRaft broker, schema registry, Redis, FakeTelegram or a real provider URL,
 * the topology, N senders), prints the addresses, a config file for the other commands and a ready-to-paste
 * {@code sluice produce} line, and sends the framework's logs to a file. With {@code --data-dir} the topics, the
 * topology's state, Redis' data and the registry's schemas (saved to {@code registry.json} every two seconds when they
 * change, and at shutdown) are kept for the next start. The command's thread starts everything and then waits; a
 * shutdown hook (Ctrl-C, SIGTERM) saves the schemas and stops everything, bounded by {@link #STOP_BOUND}.
 */
@Command(name = "dev", mixinStandardHelpOptions = true,
        description = {"Run the whole pipeline locally until Ctrl-C: embedded Kafka, schema registry, Redis, fake Telegram, the topology and senders.",
                "Prints bootstrap.servers, schema.registry.url, ops URLs and a sluice produce line to paste. Keys given with --config/-D go to the component(s) that read them",
                "(e.g. -D telegram.api.url=https://api.telegram.org with SLUICE_BOT_ALERTS_TOKEN in the environment for a real bot)."})
public final class DevCommand implements Callable<Integer> {
    /** How long the shutdown may take before the JVM is halted: Kafka's own shutdown is bounded, this bounds the rest. */
    static final Duration STOP_BOUND = Duration.ofSeconds(60);
    /**
     * How long Redis' own JVM exit hook waits for the ordered stop to close it before stopping a leftover redis-server
     * itself: below {@link #STOP_BOUND}, after which the JVM is halted (hooks cut short).
     */
    static final Duration REDIS_EXIT_WAIT = Duration.ofSeconds(45);
    /** Keys the stack sets itself; the same keys from the environment or --config would point the senders elsewhere. */
    static final Set<String> STACK_KEYS = Set.of("bootstrap.servers", "schema.registry.url", "redis.url", "application.id",
            "state.dir", "sender.instance.id", "budget.mode", "ops.port", "ops.bind.address");
    static final String READY = "sluice dev: ready";
    /** How long the topology and the senders may take to report ready (stream threads running) after start. */
    static final Duration READY_BOUND = Duration.ofSeconds(120);

    /** The data dir's lock, referenced for the life of the JVM (an unreachable channel would be closed, the lock released). */
    private static volatile DevDataDir heldDir;

    @Option(names = "--senders", defaultValue = "2", paramLabel = "N", description = "Sender instances (default ${DEFAULT-VALUE}).")
    int senders;

    @Option(names = "--data-dir", paramLabel = "DIR", description = "Keep topics, state, Redis data and schemas here across restarts (default: a temporary dir, deleted at exit). One sluice dev per dir: a second one refuses.")
    Path dataDir;

    @Option(names = "--kafka-port", defaultValue = "0", paramLabel = "PORT", description = "Kafka's port (default: a free one).")
    int kafkaPort;

    @Option(names = "--registry-port", defaultValue = "0", paramLabel = "PORT", description = "The schema registry's port (default: a free one).")
    int registryPort;

    @Option(names = "--redis-port", defaultValue = "0", paramLabel = "PORT", description = "Redis' port (default: a free one).")
    int redisPort;

    @Option(names = "--telegram-port", defaultValue = "0", paramLabel = "PORT", description = "FakeTelegram's port (default: a free one).")
    int telegramPort;

    @Option(names = "--partitions", defaultValue = "3", paramLabel = "N", description = "Partitions of each Sluice topic, when created (default ${DEFAULT-VALUE}).")
    int partitions;

    @Option(names = "--bot", defaultValue = "alerts", paramLabel = "BOT_ID", description = "The bot id FakeTelegram gets a token for; notifications name it in bot_id (default ${DEFAULT-VALUE}).")
    String bot;

    @Option(names = "--budget", defaultValue = "redis", paramLabel = "redis|local", description = "redis: the senders share one budget in Redis; local: a limiter per sender, no Redis (default ${DEFAULT-VALUE}).")
    String budget;

    @Mixin
    ConfigOptions config;

    @Mixin
    Verbosity verbosity;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return ToolErrors.run("dev", spec.commandLine().getErr(), verbosity.verbose(), this::dev);
    }

    private int dev() throws Exception {
        AvroTrust.ensure();
        PrintWriter out = spec.commandLine().getOut();
        checkOptions();
        Settings loaded = config.load();
        Settings extra = keysFor("sender", loaded);
        long started = System.nanoTime();
        Path dir;
        if (dataDir != null) {
            dir = dataDir.toAbsolutePath();
            if (!Files.isDirectory(dir)) {
                checkPortsFree(); // a new dir: a taken port refuses before anything is written
            }
            // a second sluice dev on this dir refuses before it touches anything in it
            heldDir = DevDataDir.lock(dir);
            heldDir.stopLeftoverRedis().ifPresent(line -> say(out, "%s", line));
            checkPortsFree(); // after the leftover redis-server (which may hold --redis-port) is stopped
        } else {
            checkPortsFree();
            dir = Files.createTempDirectory("sluice-dev-");
        }
        Path log = dir.resolve("sluice-dev.log");
        installFatalExit(spec.commandLine().getErr(), log);
        if (!verbosity.verbose()) {
            LogRouting.toFile(log);
        }
        boolean fake = !extra.has("telegram.api.url");
        if (fake) {
            extra = extra.with("bot." + bot + ".token", fakeToken());
        }
        EmbeddedStack.Options options = new EmbeddedStack.Options(dataDir == null ? null : dir, kafkaPort, registryPort, redisPort,
                telegramPort, partitions, senders, budget.equals("redis"), FakeTelegramLimits.telegram(), "sluice-dev-topology",
                extra, keysFor("topology", loaded));
        Path schemas = dir.resolve("registry.json");
        say(out, "%s; %d sender(s), budget %s%s", dataDir == null ? "temporary data (deleted at exit)" : "data dir " + dir, senders, budget,
                verbosity.verbose() ? "" : "; framework logs: " + log);
        EmbeddedStack stack = EmbeddedStack.start(options, s -> {
            if (dataDir != null) {
                try {
                    int n = RegistrySnapshot.restore(s.registry().url(), schemas);
                    if (n > 0) {
                        say(out, "restored %d schema versions from %s", n, schemas);
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while restoring schemas", e);
                }
            }
        }, line -> say(out, "%s", line));

        try {
            stack.awaitReady(READY_BOUND);
        } catch (RuntimeException | InterruptedException e) {
            stack.close();
            throw e;
        }

        ScheduledExecutorService saver = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sluice-dev-registry-snapshot");
            t.setDaemon(true);
            return t;
        });
        int[] savedCount = {-1};
        Runnable save = () -> {
            int count = stack.registry().schemaCount();
            if (dataDir != null && count != savedCount[0]) {
                try {
                    RegistrySnapshot.save(stack.registry().url(), schemas);
                    savedCount[0] = count;
                } catch (Exception e) {
                    org.slf4j.LoggerFactory.getLogger(DevCommand.class).warn("saving schemas to {}: {}", schemas, e.toString());
                }
            }
        };
        saver.scheduleWithFixedDelay(save, 2, 2, TimeUnit.SECONDS);

        Path properties = dir.resolve("sluice-dev.properties");
        Map<String, String> connect = new TreeMap<>();
        connect.put("bootstrap.servers", stack.kafka().bootstrapServers());
        connect.put("schema.registry.url", stack.registry().url());
        if (stack.redis() != null) {
            connect.put("redis.url", stack.redis().url());
        }
        List<String> lines = new ArrayList<>(List.of("# written by sluice dev at " + Instant.now() + "; valid while it runs"));
        connect.forEach((k, v) -> lines.add(k + "=" + v));
        Files.write(properties, lines);

        String cli = cliPrefix();
        say(out, "%s in %.1f s", READY, (System.nanoTime() - started) / 1e9);
        out.printf("  bootstrap.servers    %s%n", stack.kafka().bootstrapServers());
        out.printf("  schema.registry.url  %s%n", stack.registry().url());
        if (stack.redis() != null) {
            out.printf("  redis.url            %s%n", stack.redis().url());
        }
        out.printf("  provider             %s%n", fake ? "FakeTelegram " + stack.telegram().url() + " (bot_id " + bot
                + "; Telegram's limits: 30 msg/s per bot, 1 msg/s per chat, 20 msg/min per group)" : ToolErrors.safe(stack.providerUrl()));
        out.printf("  ops                  %s%n", String.join(", ", stack.opsUrls()));
        out.printf("  config for tools     %s%n", properties);
        out.printf("try it:%n");
        out.printf("  echo '{\"id\":\"hello-%d\",\"bot_id\":\"%s\",\"chat_id\":\"1001\",\"kind\":\"hello\",\"text\":\"Hello from Sluice\"}' | %s produce --config %s --file -%n",
                Instant.now().getEpochSecond(), bot, cli, properties);
        out.printf("  %s results --config %s --follow%n", cli, properties);
        out.printf("Ctrl-C stops everything.%n");
        out.flush();

        DevWatch watch = new DevWatch(stack.redis(), stack.senderRegistries(), line -> say(out, "%s", line));
        watch.start();
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            Thread watchdog = new Thread(() -> {
                try {
                    if (!stopped.await(STOP_BOUND.toSeconds(), TimeUnit.SECONDS)) {
                        System.err.println("sluice dev: still stopping after " + STOP_BOUND.toSeconds() + " s; halting");
                        Runtime.getRuntime().halt(3);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "sluice-dev-stop-watchdog");
            watchdog.setDaemon(true);
            watchdog.start();
            say(out, "stopping ...");
            watch.close(); // an ordered stop is no fault to report
            saver.shutdownNow();
            save.run();
            stack.close();
            if (dataDir == null) {
                deleteQuietly(dir);
            }
            say(out, "stopped");
            stopped.countDown();
        }, "sluice-dev-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        if (stack.redis() != null) {
            // this hook stops Redis after the senders and the topology (stack.close()); Redis' own exit hook, which the
            // JVM runs at the same time, now waits for that instead of stopping it under the senders
            stack.redis().stopOnExitOnlyAfterClose(REDIS_EXIT_WAIT);
        }
        stopped.await();
        return 0;
    }

    private void checkOptions() {
        if (senders < 1 || senders > 16) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--senders " + senders + ": expected 1..16");
        }
        if (!budget.equals("redis") && !budget.equals("local")) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--budget " + budget + ": expected redis or local");
        }
        Map<String, Integer> ports = new java.util.LinkedHashMap<>();
        ports.put("--kafka-port", kafkaPort);
        ports.put("--registry-port", registryPort);
        ports.put("--redis-port", redisPort);
        ports.put("--telegram-port", telegramPort);
        Set<Integer> seen = new java.util.HashSet<>();
        ports.forEach((option, port) -> {
            if (port < 0 || port > 65535) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), option + " " + port + ": expected 0 (a free one) or 1..65535");
            }
            if (port > 0 && !seen.add(port)) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), option + " " + port + ": given twice");
            }
        });
        if (partitions < 1) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--partitions " + partitions + ": expected at least 1");
        }
    }

    /** Checked after the data dir's lock (and its leftover Redis stopped), before anything starts. */
    private void checkPortsFree() {
        Map<String, Integer> ports = new java.util.LinkedHashMap<>();
        ports.put("--kafka-port", kafkaPort);
        ports.put("--registry-port", registryPort);
        ports.put("--redis-port", redisPort);
        ports.put("--telegram-port", telegramPort);
        ports.forEach((option, port) -> {
            if (port > 0) {
                // checked before anything starts: a taken port would otherwise fail deep inside Kafka's socket server
                try (java.net.ServerSocket probe = new java.net.ServerSocket()) {
                    probe.bind(new java.net.InetSocketAddress("127.0.0.1", port));
                } catch (IOException e) {
                    throw new dev.sluice.app.tools.ToolException(option + " " + port + ": 127.0.0.1:" + port + " is in use (" + e.getMessage() + ")");
                }
            }
        });
    }

    /**
     * The embedded broker ends the JVM on a fatal fault (its {@code ProcessTerminatingFaultHandler} calls Kafka's
     * {@code Exit.halt}, which skips shutdown hooks, or {@code Exit.exit}): instead of vanishing and leaving Redis
     * running, say so on stderr, stop this JVM's child processes (redis-server) by their PIDs, then halt with Kafka's
     * code. Halting (not exiting) also for {@code Exit.exit}: the shutdown hook would wait on the broker thread that
     * called it.
     */
    static void installFatalExit(PrintWriter err, Path log) {
        org.apache.kafka.common.utils.internals.Exit.Procedure fatal = (code, message) -> {
            try {
                err.println("sluice dev: embedded Kafka ended the process (fatal fault, exit code " + code
                        + (message == null ? "" : ": " + ToolErrors.safe(message)) + "); see " + log
                        + "; stopping child processes and exiting");
                err.flush();
                stopChildren(err);
            } finally {
                Runtime.getRuntime().halt(code == 0 ? 1 : code);
            }
        };
        org.apache.kafka.common.utils.internals.Exit.setHaltProcedure(fatal);
        org.apache.kafka.common.utils.internals.Exit.setExitProcedure(fatal);
    }

    /** SIGTERM to each child process, then SIGKILL after a bound; by PID, only this JVM's own children. */
    private static void stopChildren(PrintWriter err) {
        List<ProcessHandle> children = ProcessHandle.current().children().toList();
        children.forEach(ProcessHandle::destroy);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (ProcessHandle child : children) {
            try {
                child.onExit().get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (Exception e) {
                child.destroyForcibly();
            }
            err.println("sluice dev: stopped child process " + child.pid() + (child.isAlive() ? " (SIGKILL sent)" : ""));
        }
        err.flush();
    }

    /**
     * The --config / -D / SLUICE_* keys {@code process} (sender or topology) reads, minus the ones the stack sets: a
     * topology key such as {@code text.too.long} reaches the topology, a sender key the senders, a shared one
     * ({@code kafka.*}, {@code log.level}) both. Keys no component reads were refused or warned about by the load.
     */
    static Settings keysFor(String process, Settings loaded) {
        Map<String, String> keys = new TreeMap<>(loaded.asMap());
        keys.keySet().removeAll(STACK_KEYS);
        keys.keySet().removeIf(k -> !dev.sluice.app.ConfigKeys.isKnown(process, k));
        return Settings.of(keys);
    }

    /** How to run this CLI again: {@code java -jar <jar>} when started from the jar, else {@code sluice}. */
    static String cliPrefix() {
        try {
            Path code = Path.of(SluiceCli.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (code.toString().endsWith(".jar")) {
                Path cwd = Path.of("").toAbsolutePath();
                return "java -jar " + (code.startsWith(cwd) ? cwd.relativize(code) : code);
            }
        } catch (Exception e) {
            // fall through
        }
        return "sluice";
    }

    /** A random token in Telegram's shape for FakeTelegram; it exists only in this JVM and is never printed. */
    private static String fakeToken() {
        SecureRandom r = new SecureRandom();
        StringBuilder sb = new StringBuilder().append(100_000_000 + r.nextInt(800_000_000)).append(':');
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
        for (int i = 0; i < 35; i++) {
            sb.append(alphabet.charAt(r.nextInt(alphabet.length())));
        }
        return sb.toString();
    }

    private static void deleteQuietly(Path dir) {
        try (var walk = Files.walk(dir)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (Exception ignored) {
            // temporary dir; best effort
        }
    }

    private static void say(PrintWriter out, String format, Object... args) {
        out.println("[dev] " + String.format(Locale.ROOT, format, args));
        out.flush();
    }
}
