package dev.sluice.topology;

import java.time.Duration;
import org.apache.kafka.streams.processor.Cancellable;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.Punctuator;
import org.apache.kafka.streams.processor.api.ProcessorContext;

/**
 * A wall-clock punctuator that is scheduled only while its processor has something for it to do (issue 21): the
 * schedule release while a notification waits in {@code <lane>-schedule-store}, the edit check while a message waits in
 * {@code <lane>-edit-wait-store}. Kafka Streams halves the records a stream thread processes per loop after every loop
 * that ran a punctuator, so two idle punctuators per task (every 200 and 250 ms, 12 routing tasks on 6 partitions)
 * kept that number near one and made the thread pay its per-loop costs for almost every record. The owner calls
 * {@link #ensure} when it stores work and {@link #cancel} (from the punctuation itself) when none is left; a punctuation
 * scheduled at {@code t} runs at {@code t + interval}, {@code t + 2·interval}, ..., so work stored at {@code t} is looked
 * at no later than one interval after it became due, as with a punctuator scheduled at start. One instance per processor,
 * used by its task's stream thread only.
 */
final class OnDemandPunctuator {
    private final Duration interval;
    private final Punctuator punctuation;
    private ProcessorContext<?, ?> context;
    private Cancellable scheduled;

    OnDemandPunctuator(Duration interval, Punctuator punctuation) {
        this.interval = interval;
        this.punctuation = punctuation;
    }

    /** The processor's context; call from {@code init} before {@link #ensure}. */
    void init(ProcessorContext<?, ?> context) {
        this.context = context;
        this.scheduled = null;
    }

    /** Schedules the punctuation unless it is scheduled. */
    void ensure() {
        if (scheduled == null) {
            scheduled = context.schedule(interval, PunctuationType.WALL_CLOCK_TIME, punctuation);
        }
    }

    /** Stops the punctuation until the next {@link #ensure}; may be called from the punctuation itself. */
    void cancel() {
        if (scheduled != null) {
            scheduled.cancel();
            scheduled = null;
        }
    }

    /** Whether the punctuation is scheduled now (tests). */
    boolean scheduled() {
        return scheduled != null;
    }
}
