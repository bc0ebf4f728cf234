package dev.sluice.sender;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.avro.SenderStatus;
import dev.sluice.metrics.BudgetState;
import dev.sluice.metrics.SenderMetrics;
import dev.sluice.metrics.SluiceBinders;
import dev.sluice.schemas.AvroTrust;
import dev.sluice.schemas.SchemaRegistryClient;
import dev.sluice.sender.budget.BudgetListener;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.budget.stack.BudgetStack;
import dev.sluice.sender.http.HttpProviderConfig;
import dev.sluice.sender.http.HttpProviderTransport;
import dev.sluice.sender.idempotency.InMemorySentMarks;
import dev.sluice.sender.idempotency.RedisSentMarks;
import dev.sluice.sender.idempotency.SentMarks;
import dev.sluice.sender.provider.BotToken;
import dev.sluice.sender.provider.RoutingTransport;
import dev.sluice.sender.provider.Transport;
import dev.sluice.sender.telegram.TelegramTransport;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.random.RandomGenerator;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Assembles one sender from its config: the production ports ({@link #production}: Avro serdes against the schema
 * registry, the budget, the provider transports, the sent marks), the Kafka clients, the result sink and the
 * unreadable-record handling, the {@link DeliveryProcessor} with its bot slots, the {@link Lanes}, and the meters.
 * The one place the budget is assembled: {@link #budgetFor} ({@link BudgetStack}: Redis or in-process pacing, the
 * quota, the providers' limit keys). It starts no thread and holds no mutable state of its own.
 *
 * <p>Thread: built on the thread constructing the {@link SenderService}; its fields are final and each part says
 * which thread owns it (the consumer: the poll thread; the producers, sink and ports: thread-safe).
 */
final class SenderWiring {
    private static final Logger log = LoggerFactory.getLogger(SenderWiring.class);
    /** Jitter from many sending threads: each draws from its own ThreadLocalRandom. */
    private static final RandomGenerator THREAD_SAFE_RANDOM =
            () -> java.util.concurrent.ThreadLocalRandom.current().nextLong();

    final SenderConfig config;
    final MeterRegistry registry;
    final Clock clock = Clock.systemUTC();
    final SenderMetrics metrics;
    final BudgetPort budget;
    final Transport transport;
    final SentMarks sentMarks;
    final ResultLookup resultLookup;
    final Serializer<DeliveryResult> resultSerializer;
    final KafkaConsumer<String, OutboundMessage> consumer;
    /** Renewed by the poll loop, checked before every provider call (a sender stopped past its session timeout). */
    final PollLease pollLease;
    final KafkaProducer<String, DeliveryResult> producer;
    final KafkaProducer<String, SenderStatus> statusProducer;
    final KafkaProducer<byte[], byte[]> dlqProducer;
    final KafkaClientMetrics consumerMetrics;
    final KafkaClientMetrics producerMetrics;
    final OffsetTracker offsets = new OffsetTracker();
    final KafkaResultSink resultSink;
    final UnreadableRecords unreadable;
    final BotSlots botSlots;
    final DeliveryProcessor processor;
    final Lanes lanes;

    /** Production wiring; the budget reports to the sender's meters once they exist. */
    static SenderWiring production(SenderConfig config, MeterRegistry registry) {
        ForwardingBudgetListener listener = new ForwardingBudgetListener();
        SchemaRegistryClient schemas = Serdes.registry(config);
        SenderPorts ports = new SenderPorts(Serdes.outboundDeserializer(schemas),
                Serdes.resultSerializer(schemas, config.schemaAutoRegister()),
                Serdes.statusSerializer(schemas, config.schemaAutoRegister()),
                budgetFor(config, listener, registry), transportFor(config), sentMarksFor(config, registry),
                Serdes.resultDeserializer(schemas));
        SenderWiring wiring = new SenderWiring(config, registry, ports);
        listener.forwardTo(BudgetListener.of(wiring.metrics));
        return wiring;
    }

    SenderWiring(SenderConfig config, MeterRegistry registry, SenderPorts ports) {
        AvroTrust.ensure();
        this.config = config;
        this.registry = registry;
        this.budget = ports.budget();
        this.transport = ports.transport();
        this.sentMarks = ports.sentMarks();
        foldMarkWrites(config, budget, sentMarks);
        this.resultSerializer = ports.resultSerializer();
        this.metrics = SenderMetrics.bind(registry, config.bots().keySet(), budget.state());
        Map<String, Object> consumerProps = KafkaClientProps.consumer(config, config.maxPollRecords());
        this.consumer = new KafkaConsumer<>(consumerProps, new StringDeserializer(), ports.valueDeserializer());
        this.pollLease = PollLease.forConsumer(consumerProps);
        this.producer = new KafkaProducer<>(KafkaClientProps.producer(config), new StringSerializer(),
                ports.resultSerializer());
        this.statusProducer = new KafkaProducer<>(KafkaClientProps.statusProducer(config), new StringSerializer(),
                ports.statusSerializer());
        this.dlqProducer = new KafkaProducer<>(KafkaClientProps.dlqProducer(config), new ByteArraySerializer(),
                new ByteArraySerializer());
        this.consumerMetrics = SluiceBinders.kafkaConsumer(consumer, registry);
        this.producerMetrics = SluiceBinders.kafkaProducer(producer, registry);
        this.resultSink = new KafkaResultSink(producer, config.topics().deliveryResults(), config.topics().deliveryParts(),
                offsets, sentMarks, config.retryBackoff(), registry, config.instanceId());
        this.unreadable = new UnreadableRecords(consumer, dlqProducer, config.topics().outboxDlq(), resultSink, offsets,
                clock, config.unreadableSchemaGrace(), config.retryBackoff(), config.instanceId(), registry);
        this.botSlots = new BotSlots(config.maxInFlightPerBot());
        this.processor = new DeliveryProcessor(config, budget, transport, resultSink, sentMarks, metrics,
                clock, THREAD_SAFE_RANDOM, botSlots, new ChatRegistry(100_000));
        this.resultLookup = ports.resultDeserializer() == null ? ResultLookup.NONE
                : new KafkaResultLookup(config.topics().deliveryResults(), KafkaClientProps.consumer(config, 500),
                        ports.resultDeserializer());
        processor.resultLookup(resultLookup);
        processor.pollLease(pollLease);
        // Priority inheritance: a lane holding an urgent message (live CRITICAL) is served before routine lanes.
        // with reservations the dispatcher decides a bot's ready heads together (lanes indexed by their head's bot),
        // and a head holding a reserved slot is served with the urgent lanes: taken late, its slot passes unused
        this.lanes = new Lanes(new LaneScheduler<>(processor::isUrgent, PendingMessage::waitsForTurnOnly,
                processor.reservesSlots() ? PendingMessage::batchBot : null, PendingMessage::holdsReservation));
        bindMeters();
    }

    private void bindMeters() {
        config.bots().keySet().forEach(bot -> {
            metrics.budgetRate(bot, config.budgetConfig().limitsFor(bot).globalRatePerS());
            metrics.backlog(bot, () -> lanes.backlog(bot));
            metrics.tokenRejected(bot, () -> processor.tokenRejections().isRejected(bot));
        });
        FunctionCounter.builder(SenderService.REDIS_ROUND_TRIPS, budget, BudgetPort::redisRoundTrips)
                .tag("client", "budget").description("Redis round trips of the budget (script calls)").register(registry);
        FunctionCounter.builder(SenderService.REDIS_ROUND_TRIPS, sentMarks, SentMarks::redisReads)
                .tag("client", "sent_marks_read").description("Redis round trips reading sent marks outside the budget")
                .register(registry);
        FunctionCounter.builder(SenderService.REDIS_ROUND_TRIPS, sentMarks, SentMarks::redisWrites)
                .tag("client", "sent_marks_write").description("Redis round trips writing sent marks (SENT, DONE)")
                .register(registry);
        // issue 19: how many heads one budget call decides (requests) and grants, for batches of one bot's heads
        FunctionCounter.builder(SenderService.BUDGET_BATCH_CALLS, processor, DeliveryProcessor::batchCalls)
                .description("Budget calls deciding a batch of one bot's messages").register(registry);
        FunctionCounter.builder(SenderService.BUDGET_BATCH_REQUESTS, processor, DeliveryProcessor::batchRequests)
                .description("Requests carried by those budget calls").register(registry);
        FunctionCounter.builder(SenderService.BUDGET_BATCH_GRANTS, processor, DeliveryProcessor::batchGrants)
                .description("Grants (reservations included) answered by those budget calls").register(registry);
        metrics.bufferedRecords(lanes::buffered);
        metrics.maxLaneDepth(lanes::maxDepth);
    }

    /** Closes the outbox and result clients: on the poll thread when it ends, on the closing thread if never started. */
    void closeKafkaClients() {
        consumerMetrics.close();
        producerMetrics.close();
        resultSink.close();
        dlqProducer.close(Duration.ofSeconds(5));
        try {
            consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
        } catch (RuntimeException e) {
            log.warn("sender {}: consumer close failed ({})", config.instanceId(), e.toString());
        }
        producer.close(Duration.ofSeconds(5));
    }

    /** Closes the ports (the service owns them). */
    void closePorts() {
        budget.close();
        transport.close();
        sentMarks.close();
        resultLookup.close();
    }

    /**
     * Issue 19: when the sent marks live in the budget's Redis, their DONE writes ride on the budget's calls of their
     * bot (and a flush every {@code sender.sent.mark.flush.interval.ms}) instead of one SET each. Elsewhere (local
     * mode, marks in another Redis) nothing changes.
     */
    static boolean foldMarkWrites(SenderConfig config, BudgetPort budget, SentMarks sentMarks) {
        if (!(sentMarks instanceof RedisSentMarks redis) || budget.sentMarksRedisUrl().isEmpty()
                || !budget.sentMarksRedisUrl().equals(sentMarks.redisUrl())) {
            return false;
        }
        java.time.Duration hold = dev.sluice.sender.budget.MarkWrites.SENT_HOLD; // a SENT waits that long for its DONE
        if (config.sentMarkFlushInterval().compareTo(hold) < 0) {
            hold = config.sentMarkFlushInterval();
        }
        dev.sluice.sender.budget.MarkWrites writes = new dev.sluice.sender.budget.MarkWrites(MARK_WRITES_CAPACITY,
                config.sentMarkTtl().toMillis(), hold);
        if (!budget.foldMarkWrites(writes)) {
            return false;
        }
        redis.foldWritesInto(writes, config.sentMarkFlushInterval());
        return true;
    }

    /**
     * The most sent-mark writes waiting for a budget call or the flush: about 20 s of DONE marks at 5,000 msg/s
     * (~100 bytes each, ~10 MB); when full, a mark is written by its own command as without folding.
     */
    static final int MARK_WRITES_CAPACITY = 100_000;

    /** Telegram for every bot, except the bot ids configured as HTTP providers ({@code provider.<id>.*}). */
    static Transport transportFor(SenderConfig config) {
        if (config.providers().isEmpty()) {
            return new TelegramTransport(config.telegramApiUrl(), config.bots(), config.connectTimeout(),
                    config.requestTimeout(), config.budgetConfig().paidBroadcastBots(), config.maxInFlight());
        }
        Map<String, BotToken> telegramBots = new LinkedHashMap<>(config.bots());
        telegramBots.keySet().removeAll(config.providers().keySet()); // a provider's API key never reaches pengrad
        return new RoutingTransport(new HttpProviderTransport(config.providers(), config.bots(),
                config.connectTimeout(), config.requestTimeout()), new TelegramTransport(config.telegramApiUrl(),
                telegramBots, config.connectTimeout(), config.requestTimeout(), config.budgetConfig().paidBroadcastBots(),
                config.maxInFlight()));
    }

    /** Lettuce's command latencies of both Redis clients go to the process registry (issue 6). */
    static SentMarks sentMarksFor(SenderConfig config, MeterRegistry registry) {
        return switch (config.budgetMode()) {
            case REDIS -> new RedisSentMarks(config.redisUrl(), config.sentMarkTtl(), config.redisCommandTimeout(),
                    registry, config.budgetConfig().circuitMinimumCalls(), config.budgetConfig().probeInterval());
            case LOCAL -> new InMemorySentMarks(config.sentMarkTtl());
        };
    }

    /** Redis or in-process pacing, the quota and the providers' limit keys: {@link BudgetStack}. */
    static BudgetPort budgetFor(SenderConfig config, BudgetListener listener, MeterRegistry registry) {
        BudgetStack stack = BudgetStack.of(config.budgetConfig()).listener(listener).registry(registry)
                .quota(config.quota()).limitKeys(HttpProviderConfig.limitKeys(config.providers()));
        return (config.budgetMode() == BudgetMode.REDIS ? stack.redis(config.redisUrl(), config.redisCommandTimeout())
                : stack).build();
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
}
