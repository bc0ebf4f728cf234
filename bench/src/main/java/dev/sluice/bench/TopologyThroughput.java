package dev.sluice.bench;

import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.config.Settings;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.topology.TopologyConfig;
import dev.sluice.topology.TopologyService;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

/**
 * Issue 7, scenario {@code topology-throughput}: events per second through the full Sluice topology
 * (validate, key by chat, chat status, deadlines, classify, fold, route; exactly-once) against a
 * pass-through Kafka Streams application ({@code stream(notifications).to(out)}, bytes in and out, same
 * processing guarantee and commit interval, one stream thread each) on the same broker, reading the same
 * pre-produced input. 50,000 ROUTINE notifications to 5,000 chats (keyed by chat id; no sender status, so no
 * pressure, and no policy limit: each one leaves on {@code outbox.live}). Rate: (n-1) / time between the
 * first and the last output record seen by a read_committed consumer (start-up excluded).
 *
 * <p>{@code --warmup-rounds W} (default 1): both apps first process the same input W times under other application
 * ids (their own state and internal topics), and the round after them is measured. Without it the app that runs
 * first also pays the JIT compiling Kafka Streams, the clients and the in-process broker (session 22: Sluice's
 * stream-thread CPU per event 40-45 us cold, 13-18 us warm; the pass-through's 5.7-9.1 and 2.3-4.2).
 */
public final class TopologyThroughput {
    static final String PASSTHROUGH_OUT = "bench.passthrough.out";

    private TopologyThroughput() {
    }

    public static int run(String[] argv) throws Exception {
        BenchArgs args = BenchArgs.parse(argv);
        int events = args.scaled("events", 50_000, 200);
        int chats = Math.max(1, Math.min(5_000, events / 10));
        try (Infra infra = Infra.start(FakeTelegramLimits.telegram())) {
            infra.kafka.createTopics(Infra.PARTITIONS, PASSTHROUGH_OUT);
            Infra.say("producing %d notifications to %d chats", events, chats);
            try (KafkaProducer<String, Notification> producer = new KafkaProducer<>(infra.producerProps(), new StringSerializer(),
                    new SpecificAvroSerde<>(infra.client, Notification.class).serializer())) {
                Instant now = Instant.now();
                for (int i = 0; i < events; i++) {
                    String chat = Long.toString(3_000_000L + i % chats);
                    producer.send(new ProducerRecord<>(infra.topics.notifications(), chat, Notification.newBuilder()
                            .setId("tp-" + i).setBotId("tp").setChatId(chat).setKind("task.assigned")
                            .setEventClass(NotificationClass.ROUTINE).setEntity("task-" + i)
                            .setText("[tp] #" + i + " task assigned").setCreatedAt(now).build()));
                }
                producer.flush();
            }
            String guarantee = args.string("processing-guarantee", "exactly_once_v2");
            Settings common = Settings.of(Map.of("bootstrap.servers", infra.kafka.bootstrapServers(),
                    "schema.registry.url", infra.registry.url(), "processing.guarantee", guarantee,
                    "commit.interval.ms", "100", "state.dir", infra.workDir.resolve("streams").toString()));
            for (Map.Entry<String, String> e : args.topologySettings().entrySet()) {
                common = common.with(e.getKey(), e.getValue());
            }

            // --warmup-rounds W: both apps process the same input W times under other application ids first (the JIT
            // compiles Kafka Streams, the clients and the broker for whichever app runs first); 0 = measure the cold JVM
            int warmupRounds = args.integer("warmup-rounds", 1);
            Rate sluice = null;
            Rate base = null;
            for (int round = 0; round <= warmupRounds; round++) {
                String suffix = round < warmupRounds ? "-warm" + round : "";
                String what = round < warmupRounds ? "warm-up round " + (round + 1) + " of " + warmupRounds + ", " : "";
                Infra.say("%sSluice topology: %s", what, guarantee);
                TopologyService topology = new TopologyService(TopologyConfig.from(common.with("application.id", "bench-topology" + suffix)));
                sluice = measure(infra, infra.topics.outboxLive(), events, topology::start, topology, "bench-topology" + suffix);

                Infra.say("%spass-through Kafka Streams application: %s", what, guarantee);
                KafkaStreams passthrough = passthrough(infra, guarantee, "bench-passthrough" + suffix);
                base = measure(infra, PASSTHROUGH_OUT, events, passthrough::start, passthrough, "bench-passthrough" + suffix);
                if (round < warmupRounds && (sluice.count() < events || base.count() < events)) {
                    Infra.say("warm-up round did not output every event (Sluice %d, pass-through %d of %d)", sluice.count(),
                            base.count(), events);
                    return 2;
                }
            }

            BenchResult out = new BenchResult("topology-throughput", "application", "events", "events/s", "first output after s",
                    "all output after s", "ratio to pass-through", "stream-thread CPU us/event");
            out.row("Sluice topology", sluice.count(), sluice.perSecond(), sluice.firstAfterS(), sluice.allAfterS(),
                    sluice.perSecond() / base.perSecond(), sluice.cpuUsPerEvent());
            out.row("pass-through Kafka Streams", base.count(), base.perSecond(), base.firstAfterS(), base.allAfterS(), 1.0,
                    base.cpuUsPerEvent());
            out.put("sluice_events_per_s", Math.round(sluice.perSecond()))
                    .put("passthrough_events_per_s", Math.round(base.perSecond()))
                    .put("ratio", Utilisation.round(sluice.perSecond() / base.perSecond()))
                    .put("sluice_stream_thread_cpu_us_per_event", Utilisation.round(sluice.cpuUsPerEvent()))
                    .put("passthrough_stream_thread_cpu_us_per_event", Utilisation.round(base.cpuUsPerEvent()))
                    .put("cpu_ratio", Utilisation.round(base.cpuUsPerEvent() / sluice.cpuUsPerEvent()))
                    .put("warmup_rounds", warmupRounds);
            out.note("stream-thread CPU us/event: CPU time of the app's stream threads between its first and its last output"
                    + " record, over the records output in between (ThreadMXBean; robust to the machine's load, unlike events/s)");
            out.note("%s, commit.interval.ms=100, 1 stream thread each, %d partitions, one embedded broker; input pre-produced, read from the start;"
                    + " %d warm-up round(s) of both apps on the same input before the measured one", guarantee, Infra.PARTITIONS, warmupRounds);
            if (!args.topologySettings().isEmpty()) {
                out.note("topology settings (--topology-settings): %s", args.topologySettings());
            }
            out.emit(args);
            return sluice.count() >= events && base.count() >= events ? 0 : 2;
        }
    }

    /** The pass-through application: {@code stream(notifications).to(out)}, bytes in and out, one stream thread. */
    static KafkaStreams passthrough(Infra infra, String guarantee, String applicationId) {
        StreamsBuilder b = new StreamsBuilder();
        b.stream(infra.topics.notifications(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                .to(PASSTHROUGH_OUT, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, infra.kafka.bootstrapServers());
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
        p.put(StreamsConfig.STATE_DIR_CONFIG, infra.workDir.resolve("streams-pt").toString());
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        return new KafkaStreams(b.build(), p);
    }

    /** {@code cpuUsPerEvent}: the app's stream threads' CPU between its first and last output, per record output in between. */
    record Rate(long count, double perSecond, double firstAfterS, double allAfterS, double cpuUsPerEvent) {
    }

    /** Ids of the live threads named {@code <appIdPrefix>...StreamThread-<n>} (not the global stream thread). */
    static long[] streamThreads(String appIdPrefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith(appIdPrefix) && t.getName().contains("-StreamThread-"))
                .mapToLong(Thread::getId).toArray();
    }

    /** CPU time (ns) of the threads {@code ids} (a thread that ended counts 0). */
    static long cpuNs(long[] ids) {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        long ns = 0;
        for (long id : ids) {
            ns += Math.max(0, mx.getThreadCpuTime(id));
        }
        return ns;
    }

    /**
     * Starts the app, counts committed output records written to {@code topic} after the start (earlier rounds wrote
     * the same topic: counting begins at its end) until {@code expected} (bounded), closes the app.
     */
    static Rate measure(Infra infra, String topic, int expected, Runnable start, AutoCloseable app, String appIdPrefix) throws Exception {
        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, infra.kafka.bootstrapServers());
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(i -> new TopicPartition(topic, i.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToEnd(partitions);
            partitions.forEach(consumer::position); // resolves the end now, before the app writes anything
            long t0 = System.nanoTime();
            start.run();
            long count = 0;
            long first = -1;
            long last = -1;
            long cpuAtFirst = 0;
            long countAtFirst = 0;
            long cpuAtLast = 0;
            long[] threads = new long[0];
            long deadline = t0 + Duration.ofSeconds(Math.max(120, expected / 100)).toNanos();
            long nextLine = t0;
            while (count < expected && System.nanoTime() < deadline) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                if (!records.isEmpty()) {
                    long now = System.nanoTime();
                    if (first < 0) {
                        first = now;
                        threads = streamThreads(appIdPrefix);
                        cpuAtFirst = cpuNs(threads);
                        countAtFirst = records.count();
                    }
                    count += records.count();
                    last = now;
                    cpuAtLast = cpuNs(threads);
                }
                if (System.nanoTime() >= nextLine) {
                    Infra.say("  %s: %d/%d", topic, count, expected);
                    nextLine = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                }
            }
            app.close();
            if (count < 1) {
                return new Rate(0, 0, -1, -1, -1);
            }
            // a small run may arrive in one poll: then the whole time since start is the only span there is
            double rate = count >= 2 && last > first ? (count - 1) * 1e9 / (last - first) : count * 1e9 / (last - t0);
            double cpuUs = count > countAtFirst ? (cpuAtLast - cpuAtFirst) / 1e3 / (count - countAtFirst) : -1;
            return new Rate(count, rate, (first - t0) / 1e9, (last - t0) / 1e9, cpuUs);
        }
    }
}
