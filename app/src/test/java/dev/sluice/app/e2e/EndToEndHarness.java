package dev.sluice.app.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.app.tools.ProduceCommand;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.sender.SenderConfig;
import dev.sluice.sender.SenderService;
import dev.sluice.testkit.EmbeddedKafka;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.InProcessSchemaRegistry;
import dev.sluice.topology.TopicBootstrap;
import dev.sluice.topology.TopologyConfig;
import dev.sluice.topology.TopologyService;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;
import picocli.CommandLine;

/**
 * The whole pipeline in one JVM, for the end-to-end ITs that drive it from outside (ChatStatus, Migration, Duplicates):
 * the embedded KRaft broker, the in-process schema registry and a {@link FakeTelegram} (no limits) with Sluice's topics
 * created (2 partitions); the real topology and real senders ({@code budget.mode=local}) built on request, so a test can
 * stop and start them; notifications go in through {@code sluice produce} (JSON lines) and results are read from
 * {@code delivery.results} with read_committed, each wait bounded by {@link #RESULT_BOUND}.
 *
 * <p>Used from the test thread only (the results consumer is not thread-safe); the services own their threads.
 * {@link #close()} stops the consumer, FakeTelegram, the registry and the broker; the test closes the services it built.
 */
final class EndToEndHarness implements AutoCloseable {
    /** How long a test waits for a result before it fails. */
    static final Duration RESULT_BOUND = Duration.ofSeconds(60);

    final EmbeddedKafka kafka;
    final InProcessSchemaRegistry registry;
    final FakeTelegram telegram;
    final Topics topics = Topics.defaults();
    /** {@code bootstrap.servers} and {@code schema.registry.url}: what every service and tool needs. */
    final Settings common;
    private final String name;
    private final Path dir;
    private final List<DeliveryResult> results = new CopyOnWriteArrayList<>();
    private KafkaConsumer<String, DeliveryResult> consumer;
    private int files;

    private EndToEndHarness(String name, Path dir, EmbeddedKafka kafka, InProcessSchemaRegistry registry, FakeTelegram telegram) {
        this.name = name;
        this.dir = dir;
        this.kafka = kafka;
        this.registry = registry;
        this.telegram = telegram;
        this.common = Settings.of(Map.of("bootstrap.servers", kafka.bootstrapServers(), "schema.registry.url", registry.url()));
    }

    /**
     * Starts the infrastructure and creates the topics.
     *
     * @param name the topology's {@code application.id}; the results consumer's group is {@code <name>-results}
     * @param dir  a test's temporary directory (state directory, produced files)
     */
    static EndToEndHarness start(String name, Path dir) {
        AvroTrust.ensure();
        EmbeddedKafka kafka = EmbeddedKafka.start();
        InProcessSchemaRegistry registry = null;
        FakeTelegram telegram = null;
        try {
            registry = InProcessSchemaRegistry.start();
            telegram = FakeTelegram.start(FakeTelegramLimits.unlimited());
            EndToEndHarness h = new EndToEndHarness(name, dir, kafka, registry, telegram);
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
                TopicBootstrap.ensureTopics(admin, h.topics, 2, (short) 1);
            }
            return h;
        } catch (Throwable t) {
            for (AutoCloseable c : new AutoCloseable[] {telegram, registry, kafka}) {
                closeQuietly(c, t);
            }
            throw t;
        }
    }

    /**
     * A topology (not started): {@code application.id} = the harness's name, a state directory under the test's,
     * {@code commit.interval.ms=100}, then {@code settings} on top.
     */
    TopologyService topology(Map<String, String> settings) {
        Settings s = common.with("application.id", name).with("state.dir", dir.resolve("state").toString())
                .with("commit.interval.ms", "100");
        return new TopologyService(TopologyConfig.from(with(s, settings)));
    }

    /** A sender's settings: FakeTelegram's API URL, {@code budget.mode=local}, {@code sender.commit.interval.ms=100}. */
    Settings senderSettings() {
        return common.with("telegram.api.url", telegram.apiUrl()).with("budget.mode", "local")
                .with("sender.commit.interval.ms", "100");
    }

    /** A sender (not started) with {@code settings}, e.g. {@link #senderSettings()} plus the bots and the instance id. */
    static SenderService sender(Settings settings) {
        return new SenderService(SenderConfig.from(settings), new SimpleMeterRegistry());
    }

    /** The {@code -D} options that point a {@code sluice} command at this broker and registry. */
    String[] connect() {
        return new String[] {"-D", "bootstrap.servers=" + kafka.bootstrapServers(), "-D", "schema.registry.url=" + registry.url()};
    }

    /** Writes {@code lines} to a new file and runs {@code sluice produce} on it; asserts exit code 0. */
    void produce(String... lines) throws Exception {
        Path file = dir.resolve("produce-" + (++files) + ".jsonl");
        Files.write(file, List.of(lines));
        String[] args = Stream.concat(Stream.of("--file", file.toString(), "--progress", "none"), Stream.of(connect()))
                .toArray(String[]::new);
        assertThat(new CommandLine(new ProduceCommand()).setCaseInsensitiveEnumValuesAllowed(true).execute(args)).isZero();
    }

    /** The first result whose {@code message_id} is {@code id}, waiting for it at most {@link #RESULT_BOUND}. */
    DeliveryResult awaitResult(String id) {
        await().atMost(RESULT_BOUND).pollInterval(Duration.ofMillis(100)).until(() -> {
            poll();
            return find(id).isPresent();
        });
        return find(id).orElseThrow();
    }

    /** Waits (at most {@link #RESULT_BOUND}) until {@code settles} of the results read covers all of {@code ids}. */
    void awaitSettled(Set<String> ids, Function<DeliveryResult, List<String>> settles) {
        await().atMost(RESULT_BOUND).pollInterval(Duration.ofMillis(100)).until(() -> {
            poll();
            return results.stream().flatMap(r -> settles.apply(r).stream()).collect(Collectors.toSet()).containsAll(ids);
        });
    }

    /** Keeps reading results for {@code duration} (to see what else arrives). */
    void readFor(Duration duration) {
        long until = System.nanoTime() + duration.toNanos();
        while (System.nanoTime() < until) {
            poll();
        }
    }

    /** Every result read so far, in the order read. */
    List<DeliveryResult> results() {
        return results;
    }

    private Optional<DeliveryResult> find(String id) {
        return results.stream().filter(r -> r.getMessageId().equals(id)).findFirst();
    }

    private void poll() {
        if (consumer == null) {
            consumer = new KafkaConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                    ConsumerConfig.GROUP_ID_CONFIG, name + "-results", ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                    ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"), new StringDeserializer(),
                    new SpecificAvroSerde<>(new CachedSchemaRegistryClient(registry.url()), DeliveryResult.class).deserializer());
            consumer.subscribe(List.of(topics.deliveryResults()));
        }
        consumer.poll(Duration.ofMillis(200)).forEach(r -> results.add(r.value()));
    }

    private static Settings with(Settings base, Map<String, String> more) {
        Settings s = base;
        for (Map.Entry<String, String> e : more.entrySet()) {
            s = s.with(e.getKey(), e.getValue());
        }
        return s;
    }

    @Override
    public void close() {
        RuntimeException first = null;
        for (AutoCloseable c : new AutoCloseable[] {consumer, telegram, registry, kafka}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                if (first == null) {
                    first = new IllegalStateException("closing the end-to-end harness", e);
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    private static void closeQuietly(AutoCloseable c, Throwable into) {
        try {
            if (c != null) {
                c.close();
            }
        } catch (Exception e) {
            into.addSuppressed(e);
        }
    }
}
