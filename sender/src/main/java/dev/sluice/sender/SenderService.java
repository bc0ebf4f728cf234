package dev.sluice.sender;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.avro.SenderStatus;
import dev.sluice.metrics.BudgetState;
import dev.sluice.metrics.SenderMetrics;
import dev.sluice.metrics.SluiceBinders;
import dev.sluice.sender.idempotency.InMemorySentMarks;
import dev.sluice.sender.idempotency.RedisSentMarks;
import dev.sluice.sender.idempotency.SentMarks;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.random.RandomGenerator;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.schemas.SchemaRegistryClient;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.BudgetListener;
import dev.sluice.sender.http.HttpProviderTransport;
import dev.sluice.sender.budget.stack.BudgetStack;
import dev.sluice.sender.http.HttpProviderConfig;
import dev.sluice.sender.http.RoutingTransport;
import dev.sluice.sender.telegram.TelegramTransport;
import dev.sluice.sender.telegram.Transport;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.apache.kafka.common.errors.WakeupException;
import dev.sluice.metrics.SluiceMetrics;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One sender instance (DESIGN.md, Sender): a Kafka consumer of {@code outbox.live} (and
 * {@code outbox.backfill}) feeding per-chat lanes, a dispatcher that hands ready lane heads to at most
 * {@code sender.max.in.flight} concurrent budget+provider calls, and a producer of one
 * {@code DeliveryResult} per message.
 *
 * <p>Threads: {@code sluice-sender-poll-*} owns the consumer (poll, pause/resume, commits, rebalances);
 * {@code sluice-sender-dispatch-*} waits on a condition exactly until the earliest {@code readyAt} or new
 * input; {@code sluice-sender-send-*} run {@link DeliveryProcessor} steps. Nothing sleeps in a loop.
 *
 * <p>Offsets: per partition only up to the lowest message without an acknowledged result, committed every
 * {@code sender.commit.interval.ms}, on revocation (after in-flight work of the partition finished) and on
 * close. The commit metadata lists finished records above that offset, so the next owner skips them
 * instead of sending them twice (see {@link OffsetTracker}).
 *
 * <p>Backpressure, per bot first: a bot with {@code sender.buffer.max.records.per.bot} messages buffered has its
 * further records deferred (read again later, see {@link DeferredRecords}) while its partitions go on being read
 * for the other bots. Then the global bound: above the high-water mark of buffered records (plus results waiting
 * to be written, {@link KafkaResultSink}) all assigned partitions are paused, below the low-water mark resumed, so
 * buffered records never exceed {@code sender.buffer.max.records}. A record that cannot be read is held or
 * dead-lettered, never skipped ({@link UnreadableRecords}).
 */
public final class SenderService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SenderService.class);
    private static final Duration POLL_TIMEOUT = Duration.ofMillis(100);
    /** Most ready heads of one bot decided by one budget round trip. */
    static final int MAX_BATCH = 16;
    /**
     * Counter per client ({@code budget}, {@code sent_marks_read}, {@code sent_marks_write}): Redis round trips this
     * sender made: script calls of the budget (decisions with their sent-mark checks, resume work), reads of sent
     * marks outside the budget (local mode, outages), writes of sent marks after provider calls.
     */
    public static final String REDIS_ROUND_TRIPS = "sluice.redis.round.trips";
    /** Jitter from many sending threads: each draws from its own ThreadLocalRandom. */
    private static final RandomGenerator THREAD_SAFE_RANDOM = () -> java.util.concurrent.ThreadLocalRandom.current().nextLong();

    private final SenderConfig config;
    private final SenderMetrics metrics;
    private final MeterRegistry registry;
    private final Counter skipped;
    private final Clock clock;
    private final KafkaConsumer<String, OutboundMessage> consumer;
    private final KafkaProducer<String, DeliveryResult> producer;
    private final KafkaProducer<String, SenderStatus> statusProducer;
    private final KafkaClientMetrics consumerMetrics;
    private final KafkaClientMetrics producerMetrics;
    private final BudgetPort budget;
    private final Transport transport;
    private final SentMarks sentMarks;
    private final ResultLookup resultLookup;
    private final OffsetTracker offsets = new OffsetTracker();
    private final KafkaResultSink resultSink;
    private final KafkaProducer<byte[], byte[]> dlqProducer;
    private final UnreadableRecords unreadable;
    private final DeferredRecords deferred;
    private final Map<String, Counter> deferredByBot = new HashMap<>();
    private final Serializer<DeliveryResult> resultSerializer;
    private final DeliveryProcessor processor;
    private final BotSlots botSlots;
    private final ScheduledExecutorService statusTimer;
    private volatile boolean statusPublished;
    private final int highWater;
    private final int lowWater;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final LaneScheduler<PendingMessage> scheduler;
    private final Map<TopicPartition, Integer> inFlightByPartition = new HashMap<>();
    /** Lanes parked because their bot(s) had no free in-flight slot, per bot (a lane may wait on several). */
    private final Map<String, ArrayDeque<Parked>> parkedByBot = new HashMap<>();
    private final java.util.NavigableSet<Parked> parkedByTime = new java.util.TreeSet<>(
            java.util.Comparator.<Parked>comparingLong(x -> x.latestMs).thenComparingLong(x -> x.seq));
    private long parkSeq;
    /** Messages buffered per bot ({@code bot_id}), for the backlog gauge and {@code sender.status}. */
    private final Map<String, Integer> backlogByBot = new HashMap<>();
    private int inFlight;
    private boolean dispatching = true;

    private final ExecutorService senders;
    private final Thread pollThread;
    private final Thread dispatchThread;
    private volatile boolean running;
    private volatile boolean started;
    private boolean closed;
    private final PartitionPauses pauses;
    private long lastCommitMs;

    /**
     * The ports a sender uses besides Kafka; the service owns and closes all of them.
     *
     * @param valueDeserializer reads OutboundMessage values of the outbox topics
     * @param resultSerializer  writes DeliveryResult values to {@code delivery.results}
     * @param statusSerializer  writes SenderStatus values to {@code sender.status}
     * @param budget            the shared provider budget
     * @param transport         the provider
     * @param sentMarks         idempotency keys of sent messages
     * @param resultDeserializer reads {@code delivery.results} when a crash left a "sent" key behind; null: never look
     */
    public record Ports(Deserializer<OutboundMessage> valueDeserializer, Serializer<DeliveryResult> resultSerializer,
                        Serializer<SenderStatus> statusSerializer, BudgetPort budget, Transport transport,
                        SentMarks sentMarks, Deserializer<DeliveryResult> resultDeserializer) {
    }

    /**
     * Production wiring: the budget from {@code budget.mode} (Redis or local), idempotency keys in the same
     * Redis (in memory in local mode), Telegram through pengrad, Avro values in the Confluent wire format
     * against {@code schema.registry.url}.
     */
    public SenderService(SenderConfig config, MeterRegistry registry) {
        this(config, registry, new ForwardingBudgetListener());
    }

    private SenderService(SenderConfig config, MeterRegistry registry, ForwardingBudgetListener listener) {
        this(config, registry, ports(config, Serdes.registry(config), listener, registry));
        listener.forwardTo(BudgetListener.of(metrics));
    }

    /** The budget is built before the metrics it reports to; this forwards once they exist. */
    private static final class ForwardingBudgetListener implements BudgetListener {
        private volatile BudgetListener target = BudgetListener.NONE;

        void forwardTo(BudgetListener target) {
            this.target = target;
        }

        @Override
        public void redisError(String kind) {
            target.redisError(kind);
        }

        @Override
        public void stateChanged(BudgetState state) {
            target.stateChanged(state);
        }
    }

    private static Ports ports(SenderConfig config, SchemaRegistryClient schemas, BudgetListener listener,
                               MeterRegistry registry) {
        return new Ports(Serdes.outboundDeserializer(schemas), Serdes.resultSerializer(schemas, config.schemaAutoRegister()),
                Serdes.statusSerializer(schemas, config.schemaAutoRegister()),
                budgetFor(config, listener, registry),
                transportFor(config),
                sentMarksFor(config, registry), Serdes.resultDeserializer(schemas));
    }

    /** Explicit ports (tests, the demo). The service owns and closes all of them. */
    public SenderService(SenderConfig config, MeterRegistry registry, Ports ports) {
        AvroTrust.ensure();
        this.config = config;
        this.clock = Clock.systemUTC();
        this.registry = registry;
        this.budget = ports.budget();
        this.transport = ports.transport();
        this.sentMarks = ports.sentMarks();
        this.metrics = SenderMetrics.bind(registry, config.bots().keySet(), budget.state());
        config.bots().keySet().forEach(bot -> {
            metrics.budgetRate(bot, config.budgetConfig().limitsFor(bot).globalRatePerS());
            metrics.backlog(bot, () -> backlog(bot));
        });
        this.skipped = Counter.builder("sluice.sender.redelivered.skipped")
                .description("Redelivered records skipped because they already had their result").register(registry);
        int maxPollRecords = config.maxPollRecords();
        this.highWater = config.bufferMaxRecords() - maxPollRecords;
        this.lowWater = highWater / 2;
        this.pauses = new PartitionPauses(highWater, lowWater);
        this.consumer = new KafkaConsumer<>(consumerProperties(config, maxPollRecords), new StringDeserializer(),
                ports.valueDeserializer());
        this.producer = new KafkaProducer<>(producerProperties(config), new StringSerializer(), ports.resultSerializer());
        Map<String, Object> statusProps = producerProperties(config);
        statusProps.put(ProducerConfig.CLIENT_ID_CONFIG, "sluice-sender-status-" + config.instanceId());
        // Reports are periodic and replaceable: never hold the status thread (or close) for long on a missing topic.
        statusProps.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 2_000);
        statusProps.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10_000);
        statusProps.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        this.statusProducer = new KafkaProducer<>(statusProps, new StringSerializer(), ports.statusSerializer());
        this.consumerMetrics = SluiceBinders.kafkaConsumer(consumer, registry);
        this.producerMetrics = SluiceBinders.kafkaProducer(producer, registry);
        this.botSlots = new BotSlots(config.maxInFlightPerBot());
        this.botSlots.onRelease(this::wakeParked);
        this.resultSerializer = ports.resultSerializer();
        this.resultSink = new KafkaResultSink(producer, config.topics().deliveryResults(), offsets, sentMarks,
                config.retryBackoff(), registry, config.instanceId());
        Map<String, Object> dlqProps = producerProperties(config);
        dlqProps.put(ProducerConfig.CLIENT_ID_CONFIG, "sluice-sender-dlq-" + config.instanceId());
        // The poll thread waits for a dead-letter write: a missing topic must not hold it for the default minute.
        dlqProps.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) UnreadableRecords.DLQ_WRITE_TIMEOUT.toMillis());
        this.dlqProducer = new KafkaProducer<>(dlqProps, new ByteArraySerializer(), new ByteArraySerializer());
        this.unreadable = new UnreadableRecords(consumer, dlqProducer, config.topics().outboxDlq(), resultSink, offsets,
                clock, config.unreadableSchemaGrace(), config.retryBackoff(), config.instanceId(), registry);
        this.deferred = new DeferredRecords(config.bufferMaxRecordsPerBot(), config.deferredMaxRecords());
        config.bots().keySet().forEach(bot -> deferredByBot.put(bot, Counter.builder(SluiceMetrics.BACKLOG_DEFERRED)
                .tag(SluiceMetrics.TAG_BOT, bot).description("Outbox records deferred because their bot's backlog was "
                        + "at sender.buffer.max.records.per.bot (read again later)").register(registry)));
        this.processor = new DeliveryProcessor(config, budget, transport, resultSink, sentMarks, metrics,
                clock, THREAD_SAFE_RANDOM, botSlots, new ChatRegistry(100_000));
        // Priority inheritance: a lane holding an urgent message (live CRITICAL) is served before routine lanes.
        this.scheduler = new LaneScheduler<>(processor::isUrgent, PendingMessage::waitsForTurnOnly);
        this.resultLookup = ports.resultDeserializer() == null ? ResultLookup.NONE
                : new KafkaResultLookup(config.topics().deliveryResults(), consumerProperties(config, 500),
                        ports.resultDeserializer());
        processor.resultLookup(resultLookup);
        io.micrometer.core.instrument.FunctionCounter.builder(REDIS_ROUND_TRIPS, budget, BudgetPort::redisRoundTrips)
                .tag("client", "budget").description("Redis round trips of the budget (script calls)").register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder(REDIS_ROUND_TRIPS, sentMarks, SentMarks::redisReads)
                .tag("client", "sent_marks_read").description("Redis round trips reading sent marks outside the budget")
                .register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder(REDIS_ROUND_TRIPS, sentMarks, SentMarks::redisWrites)
                .tag("client", "sent_marks_write").description("Redis round trips writing sent marks (SENT, DONE)")
                .register(registry);
        metrics.bufferedRecords(this::bufferedRecords);
        metrics.maxLaneDepth(this::maxLaneDepth);
        AtomicInteger n = new AtomicInteger();
        this.senders = new ThreadPoolExecutor(config.maxInFlight(), config.maxInFlight(), 60, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "sluice-sender-send-" + config.instanceId() + "-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        this.statusTimer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sluice-sender-status-" + config.instanceId());
            t.setDaemon(true);
            return t;
        });
        this.pollThread = new Thread(this::pollLoop, "sluice-sender-poll-" + config.instanceId());
        this.dispatchThread = new Thread(this::dispatchLoop, "sluice-sender-dispatch-" + config.instanceId());
    }

    /** Telegram for every bot, except the bot ids configured as HTTP providers ({@code provider.<id>.*}). */
    private static Transport transportFor(SenderConfig config) {
        if (config.providers().isEmpty()) {
            return new TelegramTransport(config.telegramApiUrl(), config.bots(), config.connectTimeout(),
                    config.requestTimeout());
        }
        Map<String, BotToken> telegramBots = new LinkedHashMap<>(config.bots());
        telegramBots.keySet().removeAll(config.providers().keySet()); // a provider's API key never reaches pengrad
        return new RoutingTransport(new HttpProviderTransport(config.providers(), config.bots(),
                config.connectTimeout(), config.requestTimeout()), new TelegramTransport(config.telegramApiUrl(),
                telegramBots, config.connectTimeout(), config.requestTimeout()));
    }

    /** Lettuce's command latencies of both Redis clients go to the process registry (issue 6). */
    private static SentMarks sentMarksFor(SenderConfig config, MeterRegistry registry) {
        return switch (config.budgetMode()) {
            case REDIS -> new RedisSentMarks(config.redisUrl(), config.sentMarkTtl(), config.redisCommandTimeout(),
                    registry);
            case LOCAL -> new InMemorySentMarks(config.sentMarkTtl());
        };
    }

    /** Redis or in-process pacing, the quota and the providers' limit keys: {@link BudgetStack}. */
    private static BudgetPort budgetFor(SenderConfig config, BudgetListener listener, MeterRegistry registry) {
        BudgetStack stack = BudgetStack.of(config.budgetConfig()).listener(listener).registry(registry)
                .quota(config.quota()).limitKeys(HttpProviderConfig.limitKeys(config.providers()));
        return (config.budgetMode() == BudgetMode.REDIS ? stack.redis(config.redisUrl(), config.redisCommandTimeout())
                : stack).build();
    }

    static Map<String, Object> consumerProperties(SenderConfig c, int maxPollRecords) {
        Map<String, Object> p = new HashMap<>();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, c.bootstrapServers());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, c.groupId());
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "sluice-sender-" + c.instanceId());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        // The topology writes the outbox with exactly_once_v2: never read aborted records.
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, maxPollRecords);
        p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        p.putAll(c.kafkaProperties());
        return p;
    }

    static Map<String, Object> producerProperties(SenderConfig c) {
        Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, c.bootstrapServers());
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "sluice-sender-results-" + c.instanceId());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.putAll(c.kafkaProperties());
        return p;
    }

    /** Starts consuming and sending. */
    public synchronized void start() {
        if (closed) {
            throw new IllegalStateException("sender " + config.instanceId() + " is closed");
        }
        if (started) {
            throw new IllegalStateException("sender " + config.instanceId() + " already started");
        }
        started = true;
        running = true;
        log.info("starting sender {}", config);
        dispatchThread.start();
        pollThread.start();
        resultSink.checkSchema(resultSerializer);
        long period = config.statusInterval().toMillis();
        statusTimer.scheduleAtFixedRate(this::publishStatus, period, period, TimeUnit.MILLISECONDS);
    }

    /** True from {@link #start} until the consumer loop ended (closed, or failed): a liveness/readiness input. */
    public boolean isRunning() {
        return started && running && pollThread.isAlive() && dispatchThread.isAlive();
    }

    /** How the budget is decided right now (SHARED, LOCAL, FALLBACK_LOCAL, PAUSED): a readiness input. */
    public BudgetState budgetState() {
        return budget.state();
    }

    /** The registry this instance's meters are bound to. */
    public MeterRegistry registry() {
        return registry;
    }

    /** Redelivered records skipped because they already had their result (previous owner). */
    public long skippedAlreadyDone() {
        return (long) skipped.count();
    }

    /** Messages of {@code botId} ({@code bot_id}) buffered in this instance and not yet ended. */
    public long backlog(String botId) {
        lock.lock();
        try {
            return backlogByBot.getOrDefault(botId, 0);
        } finally {
            lock.unlock();
        }
    }

    private int maxLaneDepth() {
        lock.lock();
        try {
            return scheduler.maxDepth();
        } finally {
            lock.unlock();
        }
    }

    /**
     * One report per bot to the compacted {@code sender.status} (key {@code <bot>/<instance>}): backlog and
     * drain rate, read by the topology for pressure.
     */
    private void publishStatus() {
        try {
            Instant now = clock.instant();
            for (String bot : config.bots().keySet()) {
                SenderStatus status = SenderStatus.newBuilder().setBotId(bot).setInstanceId(config.instanceId())
                        .setBacklog(backlog(bot)).setDrainRatePerS(metrics.drainRate(bot)).setAt(now).build();
                statusProducer.send(new ProducerRecord<>(config.topics().senderStatus(),
                        bot + "/" + config.instanceId(), status), (md, error) -> {
                            if (error == null) {
                                statusPublished = true;
                            }
                        });
            }
        } catch (RuntimeException e) {
            log.warn("sender {}: could not publish its status ({})", config.instanceId(), e.toString());
        }
    }

    /** This instance's meters (the view shared with the ops endpoints). */
    public SenderMetrics metrics() {
        return metrics;
    }

    public String instanceId() {
        return config.instanceId();
    }

    /** Records held in lanes right now (bounded by {@code sender.buffer.max.records}). */
    public int bufferedRecords() {
        lock.lock();
        try {
            return scheduler.buffered();
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- consumer thread

    private void pollLoop() {
        List<String> topics = new ArrayList<>(List.of(config.topics().outboxLive()));
        if (config.consumeBackfill()) {
            topics.add(config.topics().outboxBackfill());
        }
        try {
            consumer.subscribe(topics, new Rebalance());
            lastCommitMs = clock.millis();
            while (running) {
                ConsumerRecords<String, OutboundMessage> records;
                try {
                    records = consumer.poll(POLL_TIMEOUT);
                } catch (RecordDeserializationException e) {
                    onUnreadable(e);
                    records = ConsumerRecords.empty();
                } catch (WakeupException e) {
                    break;
                }
                if (!records.isEmpty()) {
                    enqueue(records);
                }
                rewindDeferred();
                applyPauses();
                if (clock.millis() - lastCommitMs >= config.commitInterval().toMillis()) {
                    commit(offsets.toCommit());
                }
            }
        } catch (WakeupException e) {
            // closing
        } catch (RuntimeException e) {
            log.error("sender {} consumer loop failed; stopping", config.instanceId(), e);
        } finally {
            shutdownFromPollThread();
        }
    }

    private void enqueue(ConsumerRecords<String, OutboundMessage> records) {
        long now = clock.millis();
        lock.lock();
        try {
            for (ConsumerRecord<String, OutboundMessage> r : records) {
                TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                String bot = r.value() == null ? null : r.value().getBotId();
                if (deferred.handledBefore(tp, r.offset(), bot)) {
                    continue; // read again after a rewind: buffered or finished the first time
                }
                unreadable.readPast(tp, r.offset());
                offsets.received(tp, r.offset());
                if (offsets.isAlreadyDone(tp, r.offset())) {
                    offsets.done(tp, r.offset()); // the previous owner wrote its result (commit metadata)
                    skipped.increment();
                    continue;
                }
                if (r.value() == null) {
                    offsets.done(tp, r.offset()); // tombstone: nothing to send
                    continue;
                }
                int deferredBefore = deferred.size();
                if (!deferred.admit(tp, r.offset(), bot, backlogByBot.getOrDefault(bot, 0))) {
                    if (deferred.size() > deferredBefore) { // deferred now, not again after a rewind
                        deferredByBot.computeIfAbsent(bot, b -> Counter.builder(SluiceMetrics.BACKLOG_DEFERRED)
                                .tag(SluiceMetrics.TAG_BOT, b).register(registry)).increment();
                    }
                    continue; // its offset stays pending: read again when the bot's backlog has room
                }
                PendingMessage p = new PendingMessage(tp, r.offset(), r.value());
                scheduler.add(p.laneKey(), p, now);
                backlogByBot.merge(p.message().getBotId(), 1, Integer::sum);
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * A record that could not be read: read again after a rewind although it was dead-lettered the first time, it
     * is passed over; else {@link UnreadableRecords} holds or dead-letters it.
     */
    private void onUnreadable(RecordDeserializationException e) {
        lock.lock();
        try {
            if (deferred.handledBefore(e.topicPartition(), e.offset(), null)) {
                consumer.seek(e.topicPartition(), e.offset() + 1);
                return;
            }
        } finally {
            lock.unlock();
        }
        if (unreadable.handle(e)) {
            lock.lock();
            try {
                deferred.seen(e.topicPartition(), e.offset());
            } finally {
                lock.unlock();
            }
        }
    }

    /** Partitions holding deferred records of a bot whose backlog has room again are read again from there. */
    private void rewindDeferred() {
        Map<TopicPartition, Long> rewinds;
        lock.lock();
        try {
            rewinds = deferred.rewinds(bot -> backlogByBot.getOrDefault(bot, 0));
        } finally {
            lock.unlock();
        }
        Set<TopicPartition> assignment = consumer.assignment();
        rewinds.forEach((tp, offset) -> {
            if (assignment.contains(tp)) {
                consumer.seek(tp, offset);
            }
        });
    }

    /**
     * Pauses exactly the partitions that must wait and resumes the others: all of them above the high-water mark
     * (until the low-water mark), those holding an unreadable record until its next read, those holding deferred
     * records while the deferred offsets are at their cap.
     */
    private void applyPauses() {
        int buffered = bufferedRecords() + resultSink.awaitingWrite();
        Set<TopicPartition> forDeferred;
        lock.lock();
        try {
            forDeferred = deferred.toPause();
        } finally {
            lock.unlock();
        }
        PartitionPauses.Change change = pauses.decide(consumer.assignment(), consumer.paused(), buffered,
                unreadable.held(clock.millis()), forDeferred);
        if (change.fullBegan()) {
            metrics.backpressurePaused();
            log.info("sender {}: {} records buffered (high-water {}), pausing every partition", config.instanceId(),
                    buffered, highWater);
        } else if (change.fullEnded()) {
            log.info("sender {}: {} records buffered (low-water {}), resuming", config.instanceId(), buffered, lowWater);
        }
        if (change.deferredCapBegan()) {
            metrics.backpressurePaused();
            log.info("sender {}: {} deferred records (sender.deferred.max.records), pausing {}", config.instanceId(),
                    config.deferredMaxRecords(), forDeferred);
        }
        if (!change.pause().isEmpty()) {
            consumer.pause(change.pause());
        }
        if (!change.resume().isEmpty()) {
            consumer.resume(change.resume());
        }
    }

    private void commit(Map<TopicPartition, OffsetAndMetadata> toCommit) {
        lastCommitMs = clock.millis();
        if (toCommit.isEmpty()) {
            return;
        }
        try {
            consumer.commitSync(toCommit);
            offsets.markCommitted(toCommit);
        } catch (WakeupException e) {
            consumer.commitSync(toCommit); // closing: still commit what is done
            offsets.markCommitted(toCommit);
            throw e;
        } catch (RebalanceInProgressException e) {
            log.debug("sender {}: offset commit deferred until the rebalance completes", config.instanceId());
        } catch (RuntimeException e) {
            log.warn("sender {}: offset commit failed ({}); will retry", config.instanceId(), e.toString());
        }
    }

    private final class Rebalance implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            if (partitions.isEmpty()) {
                return;
            }
            handBack(partitions, true);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            if (!partitions.isEmpty()) {
                handBack(partitions, false);
            }
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            if (partitions.isEmpty()) {
                return;
            }
            log.info("sender {}: assigned {}", config.instanceId(), partitions);
            try {
                consumer.committed(new HashSet<>(partitions)).forEach(offsets::skipAlreadyDone);
            } catch (RuntimeException e) {
                log.warn("sender {}: could not read committed metadata of {} ({}); finished records above the "
                        + "committed offset will be sent again", config.instanceId(), partitions, e.toString());
            }
        }
    }

    /**
     * Revocation: drop the partitions' lanes (the new owner redelivers what has no result), let in-flight
     * work of those partitions finish so its results are written, then commit what is done.
     */
    private void handBack(Collection<TopicPartition> partitions, boolean commit) {
        Set<TopicPartition> gone = new HashSet<>(partitions);
        int dropped = 0;
        lock.lock();
        try {
            for (TopicPartition tp : gone) {
                List<PendingMessage> lost = scheduler.dropPartition(tp);
                dropped += lost.size();
                lost.forEach(p -> backlogByBot.merge(p.message().getBotId(), -1, (a, b) -> a + b <= 0 ? null : a + b));
            }
            awaitNoInFlight(gone, config.requestTimeout().plusSeconds(5));
            deferred.forget(gone);
        } finally {
            lock.unlock();
        }
        unreadable.forget(gone);
        if (commit) {
            producer.flush();
            Map<TopicPartition, OffsetAndMetadata> toCommit = new HashMap<>(offsets.toCommit());
            toCommit.keySet().retainAll(gone);
            try {
                if (!toCommit.isEmpty()) {
                    consumer.commitSync(toCommit);
                    offsets.markCommitted(toCommit);
                }
            } catch (RuntimeException e) {
                log.warn("sender {}: commit on revocation failed ({})", config.instanceId(), e.toString());
            }
        }
        gone.forEach(offsets::remove);
        log.info("sender {}: handed back {} ({} buffered records dropped for redelivery)", config.instanceId(), gone,
                dropped);
    }

    /** Waits (lock held) until no work of these partitions is in flight, or the bound passes. */
    private void awaitNoInFlight(Set<TopicPartition> partitions, Duration bound) {
        long deadline = System.nanoTime() + bound.toNanos();
        try {
            while (partitions.stream().anyMatch(tp -> inFlightByPartition.getOrDefault(tp, 0) > 0)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    log.warn("sender {}: in-flight sends of {} did not finish within {}", config.instanceId(),
                            partitions, bound);
                    return;
                }
                changed.awaitNanos(left);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---------------------------------------------------------------- dispatcher thread

    private void dispatchLoop() {
        lock.lock();
        try {
            while (dispatching) {
                long now = clock.millis();
                long nextParkedLimit = wakeTimedOut(now);
                List<LaneScheduler.Head<PendingMessage>> ready = new ArrayList<>();
                while (inFlight < config.maxInFlight()) {
                    LaneScheduler.Head<PendingMessage> head = scheduler.pollReady(now);
                    if (head == null) {
                        break;
                    }
                    head.message().aheadOfUrgent(scheduler.isUrgent(head));
                    inFlight++;
                    inFlightByPartition.merge(head.key().partition(), 1, Integer::sum);
                    ready.add(head);
                }
                hand(ready);
                long next = Math.min(nextParkedLimit,
                        inFlight >= config.maxInFlight() ? Long.MAX_VALUE : scheduler.nextReadyAtMs());
                if (next == Long.MAX_VALUE) {
                    changed.await();
                } else if (next > now) {
                    changed.await(next - now, TimeUnit.MILLISECONDS);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Lock held. Ready heads of the same bot (no {@code bot_pool}) go to the sending threads in batches of up to
     * {@link #MAX_BATCH}: one budget round trip decides a batch. Pool messages go one by one.
     */
    private void hand(List<LaneScheduler.Head<PendingMessage>> ready) {
        if (ready.size() == 1) {
            LaneScheduler.Head<PendingMessage> head = ready.get(0);
            if (head.message().message().getBotPool().isEmpty()) {
                senders.execute(() -> runBatch(head.message().message().getBotId(), ready));
            } else {
                senders.execute(() -> runStep(head));
            }
            return;
        }
        Map<String, List<LaneScheduler.Head<PendingMessage>>> byBot = new LinkedHashMap<>();
        for (LaneScheduler.Head<PendingMessage> head : ready) {
            OutboundMessage m = head.message().message();
            if (!m.getBotPool().isEmpty()) {
                senders.execute(() -> runStep(head));
                continue;
            }
            List<LaneScheduler.Head<PendingMessage>> batch = byBot.computeIfAbsent(m.getBotId(), b -> new ArrayList<>());
            batch.add(head);
            if (batch.size() == MAX_BATCH) {
                List<LaneScheduler.Head<PendingMessage>> full = List.copyOf(batch);
                senders.execute(() -> runBatch(m.getBotId(), full));
                batch.clear();
            }
        }
        byBot.forEach((bot, batch) -> {
            if (!batch.isEmpty()) {
                List<LaneScheduler.Head<PendingMessage>> heads = List.copyOf(batch);
                senders.execute(() -> runBatch(bot, heads));
            }
        });
    }

    /**
     * One budget decision for a batch of one bot's heads; each granted provider call runs on its own sending
     * thread (the last one on this thread), so calls of a batch overlap as they did one by one.
     */
    private void runBatch(String bot, List<LaneScheduler.Head<PendingMessage>> heads) {
        List<DeliveryProcessor.Next> next;
        try {
            List<PendingMessage> messages = new ArrayList<>(heads.size());
            heads.forEach(h -> messages.add(h.message()));
            next = processor.processBatch(bot, messages);
        } catch (RuntimeException e) {
            log.error("sender {}: processing a batch of {} messages of bot {} failed; the lanes retry in {} ms",
                    config.instanceId(), heads.size(), bot, config.retryBackoff().toMillis(), e);
            long at = clock.millis() + config.retryBackoff().toMillis();
            heads.forEach(h -> settle(h, new Step.RetryAt(at)));
            return;
        }
        int inline = -1;
        for (int i = 0; i < heads.size(); i++) {
            LaneScheduler.Head<PendingMessage> head = heads.get(i);
            DeliveryProcessor.Next n = next.get(i);
            if (!n.isCall()) {
                settle(head, n.run());
            } else if (inline < 0) {
                inline = i;
            } else {
                senders.execute(() -> settle(head, runGuarded(head, n)));
            }
        }
        if (inline >= 0) {
            settle(heads.get(inline), runGuarded(heads.get(inline), next.get(inline)));
        }
    }

    private Step runGuarded(LaneScheduler.Head<PendingMessage> head, DeliveryProcessor.Next n) {
        try {
            return n.run();
        } catch (RuntimeException e) {
            log.error("sender {}: processing {} failed; the lane retries in {} ms", config.instanceId(),
                    head.message(), config.retryBackoff().toMillis(), e);
            return new Step.RetryAt(clock.millis() + config.retryBackoff().toMillis());
        }
    }

    private void runStep(LaneScheduler.Head<PendingMessage> head) {
        Step step;
        try {
            step = processor.process(head.message());
        } catch (RuntimeException e) {
            log.error("sender {}: processing {} failed; the lane retries in {} ms", config.instanceId(),
                    head.message(), config.retryBackoff().toMillis(), e);
            step = new Step.RetryAt(clock.millis() + config.retryBackoff().toMillis());
        }
        settle(head, step);
    }

    /** A head's step is known: reschedule, park or complete its lane, and free its in-flight place. */
    private void settle(LaneScheduler.Head<PendingMessage> head, Step step) {
        lock.lock();
        try {
            if (step instanceof Step.RetryAt r) {
                scheduler.reschedule(head, r.readyAtMs());
            } else if (step instanceof Step.WaitForBot w) {
                park(head, w.botIds(), w.latestMs());
            } else {
                scheduler.complete(head, clock.millis());
                backlogByBot.merge(head.message().message().getBotId(), -1, (a, b) -> a + b <= 0 ? null : a + b);
            }
            inFlight--;
            inFlightByPartition.merge(head.key().partition(), -1, (a, b) -> a + b == 0 ? null : a + b);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** A lane waiting for a free in-flight slot of one of its bots, or until {@code latestMs}. */
    private static final class Parked {
        final LaneScheduler.Head<PendingMessage> head;
        final long latestMs;
        final long seq;
        boolean woken;

        Parked(LaneScheduler.Head<PendingMessage> head, long latestMs, long seq) {
            this.head = head;
            this.latestMs = latestMs;
            this.seq = seq;
        }
    }

    /** Lock held. Parks the lane until a call of one of the bots ends (or latestMs), unless one has room already. */
    private void park(LaneScheduler.Head<PendingMessage> head, java.util.Set<String> bots, long latestMs) {
        for (String bot : bots) {
            if (botSlots.hasRoom(bot)) {
                scheduler.reschedule(head, clock.millis()); // released meanwhile: ready at once
                return;
            }
        }
        Parked parked = new Parked(head, latestMs, parkSeq++);
        for (String bot : bots) {
            parkedByBot.computeIfAbsent(bot, b -> new ArrayDeque<>()).addLast(parked);
        }
        if (latestMs != Long.MAX_VALUE) {
            parkedByTime.add(parked);
        }
    }

    /** Lock held. Lanes parked with a time limit that has passed become ready; returns the next limit. */
    private long wakeTimedOut(long now) {
        while (!parkedByTime.isEmpty()) {
            Parked first = parkedByTime.first();
            if (first.woken) {
                parkedByTime.pollFirst();
                continue;
            }
            if (first.latestMs > now) {
                return first.latestMs;
            }
            parkedByTime.pollFirst();
            first.woken = true;
            scheduler.reschedule(first.head, now);
        }
        return Long.MAX_VALUE;
    }

    /**
     * A call of {@code bot} ended: one lane parked on it becomes ready: the first lane holding a live CRITICAL
     * message if any, else the first live lane (a backfill backlog never holds live traffic back), else the
     * first parked.
     */
    private void wakeParked(String bot) {
        lock.lock();
        try {
            ArrayDeque<Parked> queue = parkedByBot.get(bot);
            if (queue == null) {
                return;
            }
            queue.removeIf(x -> x.woken);
            Parked chosen = null;
            for (Parked x : queue) {
                if (scheduler.isUrgent(x.head)) {
                    chosen = x;
                    break;
                }
                if (chosen == null && !x.head.key().partition().topic().equals(config.topics().outboxBackfill())) {
                    chosen = x;
                }
            }
            if (chosen == null) {
                chosen = queue.peekFirst();
            }
            if (chosen != null) {
                queue.remove(chosen);
                chosen.woken = true;
                parkedByTime.remove(chosen);
                scheduler.reschedule(chosen.head, clock.millis());
                changed.signalAll();
            }
            if (queue.isEmpty()) {
                parkedByBot.remove(bot);
            }
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- shutdown

    /** Runs on the poll thread when the loop ends: finish in-flight work, write results, commit, close clients. */
    private void shutdownFromPollThread() {
        lock.lock();
        try {
            dispatching = false;
            changed.signalAll();
            awaitNoInFlight(new HashSet<>(inFlightByPartition.keySet()), config.requestTimeout().plusSeconds(5));
        } finally {
            lock.unlock();
        }
        try {
            producer.flush();
            Map<TopicPartition, OffsetAndMetadata> toCommit = offsets.toCommit();
            if (!toCommit.isEmpty()) {
                consumer.commitSync(toCommit);
                offsets.markCommitted(toCommit);
            }
        } catch (RuntimeException e) {
            log.warn("sender {}: final commit failed ({})", config.instanceId(), e.toString());
        }
        consumerMetrics.close();
        producerMetrics.close();
        resultSink.close();
        dlqProducer.close(Duration.ofSeconds(5));
        try {
            consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(5)));
        } catch (RuntimeException e) {
            log.warn("sender {}: consumer close failed ({})", config.instanceId(), e.toString());
        }
        producer.close(Duration.ofSeconds(5));
    }

    /** Graceful stop: stop polling, finish in-flight sends, write their results, commit, close every client. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (started) {
            running = false;
            try {
                consumer.wakeup();
            } catch (RuntimeException e) {
                // the poll loop already ended and closed the consumer
            }
            join(pollThread, config.requestTimeout().plusSeconds(20));
            join(dispatchThread, Duration.ofSeconds(5));
        } else {
            consumerMetrics.close();
            producerMetrics.close();
            consumer.close();
            resultSink.close();
            dlqProducer.close(Duration.ofSeconds(5));
            producer.close(Duration.ofSeconds(5));
        }
        senders.shutdown();
        statusTimer.shutdownNow();
        try {
            senders.awaitTermination(5, TimeUnit.SECONDS);
            statusTimer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            // A tombstone per bot: this instance left, its backlog no longer counts for the topology's pressure.
            for (String bot : statusPublished ? config.bots().keySet() : java.util.Set.<String>of()) {
                statusProducer.send(new ProducerRecord<>(config.topics().senderStatus(), bot + "/" + config.instanceId(),
                        null));
            }
            statusProducer.flush();
        } catch (RuntimeException e) {
            log.warn("sender {}: could not withdraw its status ({})", config.instanceId(), e.toString());
        }
        statusProducer.close(Duration.ofSeconds(2));
        budget.close();
        transport.close();
        sentMarks.close();
        resultLookup.close();
        log.info("sender {} closed", config.instanceId());
    }

    private static void join(Thread t, Duration bound) {
        try {
            t.join(bound.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
