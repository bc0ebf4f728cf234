package dev.sluice.sender;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.metrics.SluiceMetrics;
import dev.sluice.schemas.SchemaRegistryException;
import dev.sluice.sender.idempotency.SentMarks;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes results to {@code delivery.results} (key: chat id) with an idempotent producer (acks=all) and
 * marks the message's offset done only when Kafka acknowledged the result; then also raises the message's
 * idempotency key to "result written", so a redelivery after a crash writes no second result.
 *
 * <p>The result of a part of a split notification (it has a {@code part}, {@code text.too.long=split}) goes to
 * {@code delivery.parts} instead, where the topology folds the parts' results into the notification's one result.
 *
 * <p>A write that fails, at once (the serializer cannot get the schema id from the registry, the producer's
 * buffer is full) or later (the broker refused it until {@code delivery.timeout.ms} passed), is counted in
 * {@value SluiceMetrics#RESULTS_WRITE_FAILED} and written again by this sink, in memory, with exponential
 * backoff from {@code sender.retry.backoff.ms} up to {@link #RETRY_BACKOFF_MAX}, until it lands or the sender
 * closes: never by calling the provider again. Until then the message's offset stays pending, so the
 * partition's commit moves on as soon as the write lands. Results waiting for a (re)write count towards the
 * sender's buffer bound ({@link #awaitingWrite}), so their number stays bounded too. A result that can never be
 * written (a serializer bug) is retried the same way and shows in the alert on that counter. A sender that closes
 * with results still unwritten leaves their offsets uncommitted: the next owner finds the sent marks and writes
 * them without sending.
 *
 * <p>Threads: {@link #emit} runs on sending threads (and the poll thread for dead-lettered records); the
 * producer's I/O thread runs the callbacks; the retries run on this sink's own timer thread
 * ({@code sluice-sender-result-retry-*}). State is the thread-safe counter and the timer.
 */
final class KafkaResultSink implements ResultSink, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(KafkaResultSink.class);
    /** The longest wait between two writes of one result: a recovered topic is written to within this. */
    static final Duration RETRY_BACKOFF_MAX = Duration.ofSeconds(5);

    private final Producer<String, DeliveryResult> producer;
    private final String topic;
    private final String partsTopic;
    private final OffsetTracker offsets;
    private final SentMarks sentMarks;
    private final Duration backoff;
    private final ScheduledExecutorService retries;
    private final AtomicInteger awaitingWrite = new AtomicInteger();
    private final Map<String, Counter> failed = new ConcurrentHashMap<>();
    private final MeterRegistry registry;
    private volatile boolean closed;

    /** Part results go to {@code topic} too (tests of the sink alone). */
    KafkaResultSink(Producer<String, DeliveryResult> producer, String topic, OffsetTracker offsets,
                    SentMarks sentMarks, Duration backoff, MeterRegistry registry, String instanceId) {
        this(producer, topic, topic, offsets, sentMarks, backoff, registry, instanceId);
    }

    /** @param partsTopic where results with a {@code part} go ({@code topic.delivery.parts}) */
    KafkaResultSink(Producer<String, DeliveryResult> producer, String topic, String partsTopic, OffsetTracker offsets,
                    SentMarks sentMarks, Duration backoff, MeterRegistry registry, String instanceId) {
        this.producer = producer;
        this.topic = topic;
        this.partsTopic = partsTopic;
        this.offsets = offsets;
        this.sentMarks = sentMarks;
        this.backoff = backoff.compareTo(RETRY_BACKOFF_MAX) > 0 ? RETRY_BACKOFF_MAX : backoff;
        this.registry = registry;
        for (String cause : SluiceMetrics.RESULT_WRITE_FAILURE_CAUSES) {
            failed.put(cause, counter(cause));
        }
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "sluice-sender-result-retry-" + instanceId);
            t.setDaemon(true);
            return t;
        });
        timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.retries = timer;
    }

    private Counter counter(String cause) {
        return Counter.builder(SluiceMetrics.RESULTS_WRITE_FAILED).tag("cause", cause)
                .description("Result writes to delivery.results that failed and are written again (in memory)")
                .register(registry);
    }

    @Override
    public void emit(PendingMessage message, DeliveryResult result) {
        awaitingWrite.incrementAndGet();
        write(message, result, 1);
    }

    /** Results emitted whose write Kafka has not acknowledged yet (in flight or waiting for a retry). */
    int awaitingWrite() {
        return awaitingWrite.get();
    }

    private void write(PendingMessage message, DeliveryResult result, int attempt) {
        if (closed) {
            return; // the offset stays pending: the next owner writes the result from the sent mark
        }
        try {
            producer.send(new ProducerRecord<>(topicOf(result), result.getChatId(), result), (metadata, error) -> {
                if (error == null) {
                    written(message, result, attempt);
                } else {
                    failed(message, result, attempt, error);
                }
            });
        } catch (RuntimeException e) {
            failed(message, result, attempt, e);
        }
    }

    /** {@code delivery.parts} for the result of a part of a split notification, else {@code delivery.results}. */
    String topicOf(DeliveryResult result) {
        return result.getPart() != null ? partsTopic : topic;
    }

    private void written(PendingMessage message, DeliveryResult result, int attempt) {
        awaitingWrite.decrementAndGet();
        offsets.done(message.partition(), message.offset());
        if (attempt > 1) {
            log.info("wrote the {} result of message {} to {} at attempt {}", result.getStatus(),
                    result.getMessageId(), topicOf(result), attempt);
        }
        if (result.getStatus() == DeliveryStatus.DELIVERED || result.getStatus() == DeliveryStatus.UNCERTAIN) {
            // Only a message that reached the provider carries a sent mark to raise. A FAILED or EXPIRED one
            // gets none, so a replay of it (same id, e.g. `sluice replay --filter status=FAILED`) is sent.
            // the result's key (its normalised chat id) stays in the mark: the same id for another chat is no redelivery
            sentMarks.markResultWritten(message.message().getBotId(), message.message().getId(), result.getChatId());
        }
    }

    private void failed(PendingMessage message, DeliveryResult result, int attempt, Throwable error) {
        failed.get(causeOf(error)).increment();
        long waitMs = backoffMs(attempt);
        // The message is not named by its text, only by id; the error never carries a token.
        log.warn("could not write the {} result of message {} to {} (attempt {}): {}; writing it again in {} ms",
                result.getStatus(), result.getMessageId(), topicOf(result), attempt, error.toString(), waitMs);
        try {
            retries.schedule(() -> write(message, result, attempt + 1), waitMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closing: the offset stays pending, the next owner writes the result from the sent mark
        }
    }

    /**
     * Registers (or, with {@code schema.registry.auto.register=false}, looks up) the result schema now, on this
     * sink's timer, so a registry that refuses it shows in the log at start and the id is cached before the first
     * result. Tried again with backoff (at most {@link #RETRY_BACKOFF_MAX}) until it works or the sink closes; the
     * result writes retry on their own anyway.
     */
    void checkSchema(org.apache.kafka.common.serialization.Serializer<DeliveryResult> serializer) {
        checkSchema(serializer, 1);
    }

    private void checkSchema(org.apache.kafka.common.serialization.Serializer<DeliveryResult> serializer, int attempt) {
        try {
            retries.schedule(() -> {
                if (closed) {
                    return;
                }
                try {
                    serializer.serialize(topic, DeliveryResult.newBuilder().setMessageId("schema-check")
                            .setBotId("schema-check").setChatId("0").setStatus(DeliveryStatus.FAILED)
                            .setResultAt(java.time.Instant.now()).build());
                    if (attempt > 1) {
                        log.info("the registry has the result schema of {} now (attempt {})", topic, attempt);
                    }
                } catch (RuntimeException e) {
                    log.warn("the result schema of {} is not available from the registry ({}); results wait until it "
                            + "is; checking again in {} ms", topic, e.toString(), backoffMs(attempt));
                    checkSchema(serializer, attempt + 1);
                }
            }, attempt == 1 ? 0 : backoffMs(attempt - 1), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /** Exponential from {@code sender.retry.backoff.ms}, capped at {@link #RETRY_BACKOFF_MAX}. */
    long backoffMs(int attempt) {
        long ms = backoff.toMillis() << Math.min(20, attempt - 1);
        return Math.min(ms <= 0 ? RETRY_BACKOFF_MAX.toMillis() : ms, RETRY_BACKOFF_MAX.toMillis());
    }

    private static String causeOf(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof SchemaRegistryException) {
                return "registry";
            }
        }
        return error instanceof KafkaException ? "broker" : "other";
    }

    @Override
    public void alreadyFinished(PendingMessage message) {
        offsets.done(message.partition(), message.offset());
    }

    /** Stops retrying: results not yet written stay pending (their offsets are never committed). */
    @Override
    public void close() {
        closed = true;
        retries.shutdownNow();
    }
}
