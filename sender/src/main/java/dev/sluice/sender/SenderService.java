package dev.sluice.sender;

import dev.sluice.metrics.BudgetState;
import dev.sluice.metrics.SenderMetrics;
import dev.sluice.sender.budget.SharedLimitsCheck;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One sender instance (DESIGN.md, Sender): a Kafka consumer of {@code outbox.live} (and
 * {@code outbox.backfill}) feeding per-chat lanes, a dispatcher that hands ready lane heads to at most
 * {@code sender.max.in.flight} concurrent budget+provider calls, and a producer of one
 * {@code DeliveryResult} per message. This class owns the lifecycle and the threads only; the parts are
 * assembled by {@link SenderWiring}.
 *
 * <p>Threads: {@code sluice-sender-poll-*} runs the {@link OutboxPoller} (poll, pause/resume, commits,
 * rebalances) and, when it ends, the shutdown of the Kafka clients; {@code sluice-sender-dispatch-*} runs the
 * {@link Dispatcher}, which waits on a condition exactly until the earliest {@code readyAt} or new input;
 * {@code sluice-sender-send-*} run {@link DeliveryProcessor} steps; {@code sluice-sender-status-*} runs the
 * {@link StatusPublisher} and the budget's idle probe ({@link dev.sluice.sender.budget.BudgetPort#probe}). Nothing sleeps in a loop. The start/close state is guarded by this object's monitor.
 *
 * <p>Offsets: per partition only up to the lowest message without an acknowledged result (see
 * {@link OffsetTracker}, {@link OutboxPoller}). Backpressure: per bot first, then a global bound of buffered
 * records (see {@link OutboxPoller}). A record that cannot be read is held or dead-lettered, never skipped
 * ({@link UnreadableRecords}).
 */
public final class SenderService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SenderService.class);
    /**
     * Counter per client ({@code budget}, {@code sent_marks_read}, {@code sent_marks_write}): Redis round trips this
     * sender made: script calls of the budget (decisions with their sent-mark checks, resume work), reads of sent
     * marks outside the budget (local mode, outages), writes of sent marks after provider calls.
     */
    public static final String REDIS_ROUND_TRIPS = "sluice.redis.round.trips";
    /** Counters of the batch decisions: budget calls, the requests they carried, the grants they answered. */
    public static final String BUDGET_BATCH_CALLS = "sluice.budget.batch.calls";
    public static final String BUDGET_BATCH_REQUESTS = "sluice.budget.batch.requests";
    public static final String BUDGET_BATCH_GRANTS = "sluice.budget.batch.grants";

    private final SenderConfig config;
    private final SenderWiring wiring;
    private final Lanes lanes;
    private final Dispatcher dispatcher;
    private final OutboxPoller poller;
    private final StatusPublisher status;
    private final ExecutorService senders;
    private final ScheduledExecutorService statusTimer;
    private final Thread pollThread;
    private final Thread dispatchThread;
    /** Whether the senders sharing this Redis decide each bot with the same limits; null in local mode. */
    private final SharedLimitsCheck limitsCheck;
    private volatile boolean running;
    private volatile boolean started;
    private boolean closed;

    /**
     * Production wiring: the budget from {@code budget.mode} (Redis or local), idempotency keys in the same
     * Redis (in memory in local mode), Telegram through pengrad, Avro values in the Confluent wire format
     * against {@code schema.registry.url}.
     */
    public SenderService(SenderConfig config, MeterRegistry registry) {
        this(SenderWiring.production(config, registry));
    }

    /** Explicit ports (tests, the demo). The service owns and closes all of them. */
    public SenderService(SenderConfig config, MeterRegistry registry, SenderPorts ports) {
        this(new SenderWiring(config, registry, ports));
    }

    private SenderService(SenderWiring wiring) {
        this.wiring = wiring;
        this.config = wiring.config;
        this.lanes = wiring.lanes;
        String id = config.instanceId();
        AtomicInteger n = new AtomicInteger();
        this.senders = new ThreadPoolExecutor(config.maxInFlight(), config.maxInFlight(), 60, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), r -> daemon(r, "sluice-sender-send-" + id + "-" + n.incrementAndGet()));
        this.statusTimer = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "sluice-sender-status-" + id));
        this.dispatcher = new Dispatcher(lanes, wiring.processor, wiring.botSlots, senders, wiring.clock, config);
        wiring.botSlots.onRelease(dispatcher::slotReleased);
        this.poller = new OutboxPoller(wiring, lanes, dispatcher);
        this.status = new StatusPublisher(wiring.statusProducer, config, lanes::backlog, wiring.metrics, wiring.clock);
        this.pollThread = new Thread(this::pollThenShutDown, "sluice-sender-poll-" + id);
        this.dispatchThread = new Thread(dispatcher, "sluice-sender-dispatch-" + id);
        // under off the check still publishes this sender's limits: one sender set to off must not hide from the others
        this.limitsCheck = config.budgetMode() != BudgetMode.REDIS ? null : SharedLimitsCheck.of(config.redisUrl(), config.redisCommandTimeout(), id, config.budgetConfig(),
                        config.bots().keySet());
        if (limitsCheck != null) {
            wiring.metrics.limitsDisagreeingBots(limitsCheck::disagreeingBots);
        }
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /** Starts consuming and sending. */
    public synchronized void start() {
        if (closed) {
            throw new IllegalStateException("sender " + config.instanceId() + " is closed");
        }
        if (started) {
            throw new IllegalStateException("sender " + config.instanceId() + " already started");
        }
        if (limitsCheck != null) { // under refuse, a disagreement with a live sender stops the start here
            limitsCheck.start(config.budgetConfig().limitsCheck());
        }
        started = true;
        running = true;
        log.info("starting sender {}", config);
        dispatchThread.start();
        pollThread.start();
        wiring.resultSink.checkSchema(wiring.resultSerializer);
        if (config.budgetMode() == BudgetMode.REDIS) { // marks outlive the process: check their TTL (warns only)
            SentMarkTtlCheck.startAsync(config);
        }
        long period = config.statusInterval().toMillis();
        statusTimer.scheduleAtFixedRate(status::publish, period, period, TimeUnit.MILLISECONDS);
        // an idle sender learns that Redis is back without a message to decide (BudgetPort#probe); a no-op while shared
        long probeMs = Math.max(100, config.budgetConfig().probeInterval().toMillis());
        statusTimer.scheduleWithFixedDelay(this::probeBudget, probeMs, probeMs, TimeUnit.MILLISECONDS);
    }

    /** On the status thread; an exception would end the schedule, so none leaves (ResilientBudget throws none of Redis's). */
    private void probeBudget() {
        try {
            wiring.budget.probe();
        } catch (RuntimeException e) {
            log.debug("budget probe: {}", e.toString());
        }
    }

    /** True from {@link #start} until the consumer loop ended (closed, or failed): a liveness/readiness input. */
    public boolean isRunning() {
        return started && running && pollThread.isAlive() && dispatchThread.isAlive();
    }

    /** How the budget is decided right now (SHARED, LOCAL, FALLBACK_LOCAL, PAUSED): a readiness input. */
    public BudgetState budgetState() {
        return wiring.budget.state();
    }

    /**
     * Whether the outbox consumer holds at least one open broker connection right now (its {@code connection-count}
     * metric, read from the client's metrics map, which is safe from any thread): a readiness input. With no broker
     * reachable it drops to 0 within a few reconnect attempts, and the sender can neither consume nor write results;
     * the loops keep running and reconnect by themselves, so this is not a liveness input.
     */
    public boolean kafkaConnected() {
        for (var e : wiring.consumer.metrics().entrySet()) {
            if (e.getKey().name().equals("connection-count") && e.getKey().group().equals("consumer-metrics")
                    && e.getValue().metricValue() instanceof Number n && n.doubleValue() > 0) {
                return true;
            }
        }
        return false;
    }

    /** Bots whose token the provider rejects right now (401/404): their lanes are parked; a readiness input. */
    public java.util.Set<String> tokenRejectedBots() {
        return wiring.processor.tokenRejections().rejectedBots();
    }

    /** The registry this instance's meters are bound to. */
    public MeterRegistry registry() {
        return wiring.registry;
    }

    /** Redelivered records skipped because they already had their result (previous owner). */
    public long skippedAlreadyDone() {
        return poller.skippedAlreadyDone();
    }

    /** Messages of {@code botId} ({@code bot_id}) buffered in this instance and not yet ended. */
    public long backlog(String botId) {
        return lanes.backlog(botId);
    }

    /** This instance's meters (the view shared with the ops endpoints). */
    public SenderMetrics metrics() {
        return wiring.metrics;
    }

    public String instanceId() {
        return config.instanceId();
    }

    /** Records held in lanes right now (bounded by {@code sender.buffer.max.records}). */
    public int bufferedRecords() {
        return lanes.buffered();
    }

    /** The poll thread: the poll loop, then (closed or failed) finish in-flight work, write results, commit, close. */
    private void pollThenShutDown() {
        try {
            poller.run();
        } finally {
            Duration bound = config.requestTimeout().plusSeconds(5);
            if (!lanes.awaitNoInFlight(lanes.stopDispatching(), bound)) {
                log.warn("sender {}: in-flight sends did not finish within {}", config.instanceId(), bound);
            }
            poller.finalCommit();
            wiring.closeKafkaClients();
        }
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
            poller.stop();
            join(pollThread, config.requestTimeout().plusSeconds(20));
            join(dispatchThread, Duration.ofSeconds(5));
        } else {
            wiring.closeKafkaClients();
        }
        senders.shutdown();
        statusTimer.shutdownNow();
        try {
            senders.awaitTermination(5, TimeUnit.SECONDS);
            statusTimer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        status.close();
        if (limitsCheck != null) {
            limitsCheck.close();
        }
        wiring.closePorts();
        long calls = wiring.processor.batchCalls();
        log.info("sender {} closed; batch decisions: {} budget calls, {} requests, {} grants ({} grants per call)",
                config.instanceId(), calls, wiring.processor.batchRequests(), wiring.processor.batchGrants(),
                calls == 0 ? "-" : String.format(java.util.Locale.ROOT, "%.2f",
                        wiring.processor.batchGrants() / (double) calls));
    }

    private static void join(Thread t, Duration bound) {
        try {
            t.join(bound.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
