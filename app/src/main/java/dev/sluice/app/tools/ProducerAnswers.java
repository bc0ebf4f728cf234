package dev.sluice.app.tools;

import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * Counts the answers (callbacks) a tool's producer gave and waits for the rest with a bound. Not
 * {@code KafkaProducer.flush()}: an idempotent producer whose InitProducerId is never answered keeps its batches past
 * {@code delivery.timeout.ms} and flush() waits without end ({@code ProduceUnansweredIdIT}). Thread-safe: the callbacks
 * run on the producer's I/O thread, the wait on the tool's.
 */
final class ProducerAnswers {
    /** What the wait adds to the records' own bound, {@code delivery.timeout.ms}. */
    static final Duration MARGIN = Duration.ofSeconds(5);
    private long answered;

    /** One send got its answer (written or an error): call last in every callback (a finally), after its counts. */
    synchronized void answered() {
        answered++;
        notifyAll();
    }

    /**
     * Until {@code handed} sends have their answers, at most {@code bound}.
     *
     * @return false when the bound ran out first (close the producer: the rest are not confirmed)
     */
    synchronized boolean await(LongSupplier handed, Duration bound) throws InterruptedIOException {
        return awaitAtMost(handed, 0, bound);
    }

    /**
     * Until at most {@code unanswered} of the {@code handed} sends wait for their answers, at most {@code bound}.
     *
     * @return false when the bound ran out first
     */
    synchronized boolean awaitAtMost(LongSupplier handed, long unanswered, Duration bound) throws InterruptedIOException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (handed.getAsLong() - answered > unanswered) {
            long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (leftMs <= 0) {
                return false;
            }
            try {
                wait(leftMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while waiting for Kafka's answers");
            }
        }
        return true;
    }

    /** The producer's {@code delivery.timeout.ms} (Kafka's default 120 s) + {@link #MARGIN}. */
    static Duration confirmBound(Map<String, Object> producerProps) {
        Object ms = producerProps.getOrDefault(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000);
        return Duration.ofMillis(Long.parseLong(ms.toString().trim())).plus(MARGIN);
    }
}
