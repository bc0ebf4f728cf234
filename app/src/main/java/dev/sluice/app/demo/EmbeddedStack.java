package dev.sluice.app.demo;

import dev.sluice.app.SenderCommand;
import dev.sluice.app.TopologyCommand;
import dev.sluice.app.ops.ProcessOps;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.sender.SenderConfig;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.testkit.RedisInstance;
import dev.sluice.testkit.RedisLauncher;
import dev.sluice.topology.TopicBootstrap;
import dev.sluice.topology.TopologyConfig;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * The whole pipeline on one machine, as {@code sluice demo} and {@code sluice dev} run it: an embedded KRaft broker,
 * Redis (unless the budget is local), the in-process schema registry, a FakeTelegram that enforces the limits (or
 * none, when the senders are given a real provider URL), the Sluice topics, the topology and N senders, each with
 * its own ops server ({@code /metrics}, {@code /health/*}) on 127.0.0.1. Ports are free ones unless fixed; with a
 * data dir, Kafka's log, Redis' append-only file and the topology's state stay there across restarts. Built and
 * closed by one thread (the command's); the parts run their own threads.
 */
public final class EmbeddedStack implements AutoCloseable {

    /**
     * What to start.
     *
     * @param dataDir null: everything in temporary dirs deleted at close
     * @param kafkaPort 0 = a free port; likewise the other ports
     * @param providerLimits FakeTelegram's limits; ignored when {@code senderSettings} has {@code telegram.api.url}
     * @param redisBudget true: senders share the budget in Redis; false: {@code budget.mode=local} without Redis
     * @param senderSettings keys every sender gets (bot tokens, budget keys, telegram.api.url)
     * @param topologySettings keys the topology gets (digest.flush.interval.ms ...)
     */
    public record Options(Path dataDir, int kafkaPort, int registryPort, int redisPort, int telegramPort, int partitions,
                          int senders, boolean redisBudget, FakeTelegramLimits providerLimits, String applicationId,
                          Settings senderSettings, Settings topologySettings) {
    }

    /**
     * In a data dir: {@code "<pid> <port>"} of the redis-server this stack started, written when it answers PING, so a
     * later start on the same dir can stop one that a killed JVM left behind (see {@code DevDataDir}).
     */
    public static final String REDIS_PID_FILE = "redis.pid";

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final List<String> opsUrls = new ArrayList<>();
    private final List<MeterRegistry> senderRegistries = new ArrayList<>();
    private Path tempDir;
    private Path redisPidFile;
    private EmbeddedKafka kafka;
    private InProcessSchemaRegistry registry;
    private RedisInstance redis;
    private FakeTelegram telegram;
    private String providerUrl;
    private final List<String> readinessUrls = new ArrayList<>();

    private EmbeddedStack() {
    }

    /**
     * Starts everything in order; on a failure stops what already runs and rethrows.
     *
     * @param beforeTopology runs once the registry is up and before anything registers a schema (the dev command
     *     restores saved schemas there); may be a no-op
     * @param say progress lines for the user
     */
    public static EmbeddedStack start(Options o, Consumer<EmbeddedStack> beforeTopology, Consumer<String> say) throws IOException {
        EmbeddedStack stack = new EmbeddedStack();
        try {
            stack.startAll(o, beforeTopology, say);
            return stack;
        } catch (RuntimeException | IOException e) {
            stack.close();
            throw e;
        }
    }

    private void startAll(Options o, Consumer<EmbeddedStack> beforeTopology, Consumer<String> say) throws IOException {
        Path base = o.dataDir();
        if (base == null) {
            tempDir = Files.createTempDirectory("sluice-stack-");
            base = tempDir;
        }
        say.accept("starting embedded Kafka (KRaft)" + (o.redisBudget() ? ", Redis" : "") + ", schema registry"
                + (o.senderSettings().has("telegram.api.url") ? "" : ", fake Telegram") + " ...");
        kafka = o.dataDir() == null && o.kafkaPort() == 0 ? EmbeddedKafka.start()
                : EmbeddedKafka.startPersistent(base.resolve("kafka"), o.kafkaPort(), Map.of());
        closeables.add(kafka);
        if (o.redisBudget()) {
            redis = RedisLauncher.localProcess().launchAt(o.redisPort(), o.dataDir() == null ? null : base.resolve("redis"));
            closeables.add(redis);
            if (o.dataDir() != null) {
                // at once, so that a next start on this dir finds it if this JVM is killed (kill -9) before its hooks run
                redisPidFile = base.resolve(REDIS_PID_FILE);
                Files.writeString(redisPidFile, redis.pid() + " " + redis.port() + "\n");
            }
        }
        registry = InProcessSchemaRegistry.start(o.registryPort());
        closeables.add(registry);
        if (o.senderSettings().has("telegram.api.url")) {
            providerUrl = o.senderSettings().string("telegram.api.url", null);
        } else {
            telegram = FakeTelegram.start(o.telegramPort(), o.providerLimits());
            closeables.add(telegram);
            providerUrl = telegram.apiUrl();
        }
        Topics topics = Topics.defaults();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
            TopicBootstrap.ensureTopics(admin, topics, o.partitions(), (short) 1);
        }
        beforeTopology.accept(this);

        Settings common = Settings.of(Map.of("bootstrap.servers", kafka.bootstrapServers(), "schema.registry.url", registry.url()));
        Settings opsLocal = Settings.of(Map.of("ops.port", "0", "ops.bind.address", "127.0.0.1"));
        ProcessOps topologyOps = ProcessOps.create("topology", opsLocal, 0);
        closeables.add(topologyOps);
        Settings topologySettings = common.with("application.id", o.applicationId())
                .with("state.dir", base.resolve("streams").toString())
                .with("commit.interval.ms", "100");
        for (Map.Entry<String, String> e : o.topologySettings().asMap().entrySet()) {
            topologySettings = topologySettings.with(e.getKey(), e.getValue());
        }
        closeables.add(TopologyCommand.start(TopologyConfig.from(topologySettings), topologyOps));
        opsUrls.add("topology http://127.0.0.1:" + topologyOps.port() + "/metrics");
        readinessUrls.add("http://127.0.0.1:" + topologyOps.port() + "/health/ready");

        for (int i = 0; i < o.senders(); i++) {
            Settings s = common.with("sender.instance.id", "sender-" + (i + 1))
                    .with("telegram.api.url", providerUrl)
                    .with("budget.mode", o.redisBudget() ? "redis" : "local");
            for (Map.Entry<String, String> e : o.senderSettings().asMap().entrySet()) {
                s = s.with(e.getKey(), e.getValue());
            }
            if (redis != null) {
                s = s.with("redis.url", redis.url());
            }
            ProcessOps senderOps = ProcessOps.create("sender", opsLocal, 0);
            closeables.add(senderOps);
            closeables.add(SenderCommand.start(SenderConfig.from(s), senderOps));
            senderRegistries.add(senderOps.registry());
            opsUrls.add("sender-" + (i + 1) + " http://127.0.0.1:" + senderOps.port() + "/metrics");
            readinessUrls.add("http://127.0.0.1:" + senderOps.port() + "/health/ready");
        }
    }

    /**
     * Waits until the topology and every sender answer {@code /health/ready} with 200 (the stream threads run, the
     * senders have their budget), polling every 200 ms.
     *
     * @throws IllegalStateException naming the URLs still not ready after {@code bound}
     */
    public void awaitReady(java.time.Duration bound) throws InterruptedException {
        java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder().connectTimeout(java.time.Duration.ofSeconds(2)).build();
        long deadline = System.nanoTime() + bound.toNanos();
        List<String> waiting = new ArrayList<>(readinessUrls);
        while (!waiting.isEmpty()) {
            waiting.removeIf(url -> {
                try {
                    return http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(url)).timeout(java.time.Duration.ofSeconds(2)).build(),
                            java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
                } catch (IOException e) {
                    return false;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            });
            if (waiting.isEmpty()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("not ready after " + bound.toSeconds() + " s: " + waiting);
            }
            Thread.sleep(200); // polling a health endpoint, bounded by the deadline above
        }
    }

    public EmbeddedKafka kafka() {
        return kafka;
    }

    public InProcessSchemaRegistry registry() {
        return registry;
    }

    /** Null when the budget is local. */
    public RedisInstance redis() {
        return redis;
    }

    /** Null when the senders call a real provider URL. */
    public FakeTelegram telegram() {
        return telegram;
    }

    /** The provider base URL the senders call (FakeTelegram's or the configured one). */
    public String providerUrl() {
        return providerUrl;
    }

    /** "name http://127.0.0.1:port/metrics" for the topology and each sender. */
    public List<String> opsUrls() {
        return List.copyOf(opsUrls);
    }

    public List<MeterRegistry> senderRegistries() {
        return List.copyOf(senderRegistries);
    }

    /** Stops everything in reverse order; the data dir stays, temporary dirs go. Idempotent. */
    @Override
    public void close() {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception e) {
                org.slf4j.LoggerFactory.getLogger(EmbeddedStack.class).warn("while stopping {}: {}",
                        closeables.get(i).getClass().getSimpleName(), e.toString());
            }
        }
        closeables.clear();
        if (redisPidFile != null) {
            try {
                Files.deleteIfExists(redisPidFile); // Redis is stopped: nothing for the next start to clean up
            } catch (IOException ignored) {
                // a stale file is checked (and ignored) by the next start
            }
            redisPidFile = null;
        }
        if (tempDir != null) {
            try (Stream<Path> walk = Files.walk(tempDir)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException ignored) {
                // a temporary dir; best effort
            }
            tempDir = null;
        }
    }
}
