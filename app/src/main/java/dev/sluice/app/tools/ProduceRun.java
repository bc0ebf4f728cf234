package dev.sluice.app.tools;

import dev.sluice.app.logging.RedactingCliErrors;
import dev.sluice.avro.Notification;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;

/**
 * One {@code sluice produce} run's sending loop and its summary: reads lines, reports and skips bad ones, hands good
 * ones to the producer, and stops early when {@link #stop()} is called (Ctrl-C, SIGTERM: the command's shutdown hook).
 * After a stop the producer is closed with a bound ({@link #CLOSE_BOUND}: what was handed to it gets that long to be
 * confirmed) and the summary says what was written, skipped, failed, left unconfirmed and not read; the exit code is
 * then {@link #EXIT_INTERRUPTED}. A record is <em>failed</em> when the producer answered its send with an error (the
 * first error is named, its class and message, secrets removed), <em>not confirmed</em> when no answer came before the
 * end: what the producer abandons when its close bound runs out is reported to the callbacks as an error of its own,
 * and counted as not confirmed (it may or may not have been written). So is a record whose
 * {@code delivery.timeout.ms} ran out (a {@link org.apache.kafka.common.errors.TimeoutException} in its callback: the
 * broker may have appended it and the answer been lost; review R11). A failed or timed-out send also ends the loop (exit 2).
 *
 * <p>The summary is printed once, by whichever of the loop and the hook gets there first: the hook when the loop is
 * stuck (blocked reading stdin, or in a send waiting for metadata) or has not started (a stop while the command still
 * checks the registry and Kafka: the same summary, nothing sent). Counters are read by both threads; the loop itself
 * runs on one.
 *
 * <p>Stdin that ends inside a line (no line end): at Ctrl-C the writer of a pipe is interrupted too and may leave half
 * a line, and its end may reach the loop just before the stop does. So such a last line waits up to
 * {@link #LAST_LINE_WAIT} for a stop: with one it is not sent and not a bad line, and the summary says
 * {@value #INCOMPLETE_LAST_LINE}; without one it is read as any line (written, or bad), as before. A file's last line
 * without a line end is read at once.
 */
final class ProduceRun {
    /** How long records already handed to the producer get to be confirmed after a stop. */
    static final Duration CLOSE_BOUND = Duration.ofSeconds(5);
    /**
     * Exit code after a stop: 128 + SIGINT, what a shell reports for a program ended by Ctrl-C. The process's own exit
     * code is the JVM's after a signal, 128 + the signal: 130 for SIGINT, 143 for SIGTERM.
     */
    static final int EXIT_INTERRUPTED = 130;
    /** How long a last line of stdin without a line end waits for a stop before it is read as a line. */
    static final Duration LAST_LINE_WAIT = Duration.ofSeconds(1);
    /** What the summary after a stop says of a last line of stdin cut off before its line end. */
    static final String INCOMPLETE_LAST_LINE = "an incomplete last line (no line end) left unsent";

    private final NotificationJson parser;
    private final String target;
    private final long linesInInput; // -1 when unknown (stdin)
    private final PrintWriter out;
    private final PrintWriter err;
    private final AtomicBoolean stop = new AtomicBoolean();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final AtomicBoolean summarized = new AtomicBoolean();
    private final AtomicLong handed = new AtomicLong();
    private final AtomicLong written = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong bad = new AtomicLong();
    private final AtomicLong total = new AtomicLong();
    private final AtomicLong linesRead = new AtomicLong();
    private final AtomicReference<Exception> sendError = new AtomicReference<>();
    /** The records handed over that have their answer (written or an error), awaited at the input's end. */
    private final ProducerAnswers answers = new ProducerAnswers();
    /** The answers did not all come within {@link #confirmBound}: the producer was closed, the rest not confirmed. */
    private final AtomicBoolean gaveUp = new AtomicBoolean();
    /** The first send whose delivery timeout ran out: not confirmed (maybe written), and the loop ends. */
    private final AtomicReference<Exception> timedOut = new AtomicReference<>();
    private final CountDownLatch loopEnded = new CountDownLatch(1);
    private final CountDownLatch summaryPrinted = new CountDownLatch(1);
    /** The producer {@link #send} was given; null until the loop starts. */
    private volatile Producer<?, ?> producer;
    /** The lines {@link #send} reads; null until the loop starts. */
    private volatile BoundedLines input;
    /** The loop reached the end of the input. */
    private volatile boolean inputEnded;
    /** Stdin ended inside its last line, and a stop came: that line was neither sent nor counted. */
    private volatile boolean lastLineIncomplete;

    /** @param linesInInput the input's lines (all of them, blank too), or -1 when not known in advance (stdin) */
    ProduceRun(NotificationJson parser, String target, long linesInInput, PrintWriter out, PrintWriter err) {
        this.parser = parser;
        this.target = target;
        this.linesInInput = linesInInput;
        this.out = out;
        this.err = err;
    }

    /** How long the records handed over get to be confirmed after the input's end (else the run gives up on them). */
    private volatile Duration confirmBound = Duration.ofSeconds(125);

    /**
     * How many records handed over may wait for their answers while the loop reads on: beyond it the loop waits (at most
     * {@link #confirmBound}), so a Kafka that stopped answering does not take the whole input into the producer's buffer
     * (outside trial: 265,224 of 300,000 "not confirmed", none left "not read").
     */
    static final long MAX_UNANSWERED = 10_000;
    private volatile long maxUnanswered = MAX_UNANSWERED;

    /** Sets the bound of records waiting for their answers (tests). */
    void maxUnanswered(long n) {
        this.maxUnanswered = n;
    }

    /** Sets {@link #confirmBound}: the producer's {@code delivery.timeout.ms} plus a margin. */
    void confirmBound(Duration bound) {
        this.confirmBound = bound;
    }

    /** Asks the loop to stop before its next line (any thread). */
    void stop() {
        stop.set(true);
        stopped.countDown();
    }

    /**
     * What the shutdown hook does (Ctrl-C, SIGTERM): stops the loop and waits for it to close the producer and print the
     * summary; when the loop does not end within a second (blocked reading stdin, or in a send waiting for metadata)
     * it closes the producer itself with {@link #CLOSE_BOUND} and prints the summary. Before the loop has started
     * (the command still checks the registry and Kafka) nothing was handed over: it prints the summary at once, and a
     * loop started after it sends nothing. Bounded: at most about {@link #CLOSE_BOUND} + 3 s.
     */
    void stopFromHook() throws InterruptedException {
        stop();
        Producer<?, ?> producer = this.producer; // read after the stop: a loop that starts later sees the stop
        if (producer == null) {
            summary();
            return;
        }
        if (loopEnded.await(1, TimeUnit.SECONDS)) {
            summaryPrinted.await(CLOSE_BOUND.toMillis() + 2_000, TimeUnit.MILLISECONDS);
        } else {
            producer.close(CLOSE_BOUND);
        }
        summary(); // prints only if the loop has not
    }

    boolean stopped() {
        return stop.get();
    }

    /**
     * Sends every good line of {@code in} until its end, a send error or {@link #stop()}; then flushes (after a stop:
     * closes with {@link #CLOSE_BOUND}). The caller closes {@code producer} again (a second close does nothing).
     */
    void send(BoundedLines in, Producer<String, Notification> producer, Progress bar) throws IOException {
        this.producer = producer;
        this.input = in;
        try {
            loop(in, producer, bar);
        } finally {
            loopEnded.countDown();
        }
        if (stop.get()) {
            producer.close(CLOSE_BOUND); // what was handed over gets this long; the rest is counted as unconfirmed
        } else if (gaveUp.get() || !answers.await(handed::get, confirmBound)) {
            // not flush(): an idempotent producer whose InitProducerId is never answered keeps its batches past
            // delivery.timeout.ms and flush() waits without end (ProduceUnansweredIdIT); what is left is not confirmed
            gaveUp.set(true);
            producer.close(Duration.ZERO);
        }
        bar.message(written.get() + " written, " + bad.get() + " skipped");
    }

    private void loop(BoundedLines in, Producer<String, Notification> producer, Progress bar) throws IOException {
        while (!stop.get() && sendError.get() == null && timedOut.get() == null) {
            if (!answers.awaitAtMost(handed::get, maxUnanswered - 1, confirmBound)) { // room for the next one
                gaveUp.set(true); // Kafka stopped answering: the rest of the input is not read
                return;
            }
            BoundedLines.Line line = in.next();
            if (line == null) {
                inputEnded = true;
                return;
            }
            if (!line.ended() && linesInInput < 0) {
                inputEnded = true; // stdin ended inside this line: a writer cut off by the same Ctrl-C?
                if (awaitStop(LAST_LINE_WAIT)) {
                    lastLineIncomplete = true;
                    return;
                }
            }
            if (stop.get()) {
                return; // a stop while this read waited: a line read after it is not sent
            }
            linesRead.incrementAndGet();
            bar.step(1);
            if (!line.unreadable() && skip(line.text())) {
                continue;
            }
            total.incrementAndGet();
            Notification notification;
            try {
                notification = parse(parser, line);
            } catch (InvalidLineException e) {
                bad.incrementAndGet();
                err.println("produce: skipped " + dev.sluice.chat.Identifiers.escapeInvisible(e.getMessage()));
                continue;
            }
            handed.incrementAndGet();
            try {
                producer.send(new ProducerRecord<>(target, notification.getChatId(), notification), (md, ex) -> {
                    try {
                        if (ex == null) {
                            written.incrementAndGet();
                        } else if (ex instanceof org.apache.kafka.common.errors.TimeoutException) {
                            timedOut.compareAndSet(null, ex); // maybe written: counted as not confirmed
                        } else if (!abandonedAtClose(ex)) {
                            failed.incrementAndGet();
                            sendError.compareAndSet(null, ex);
                        } // else: no answer from Kafka before the end, counted as not confirmed
                    } finally {
                        answers.answered(); // last: the wait for it sees its counts
                    }
                });
            } catch (RuntimeException e) {
                handed.decrementAndGet();
                if (stop.get()) {
                    return; // the hook closed the producer while this send waited (for metadata, or buffer room)
                }
                throw e;
            }
            bar.message(written.get() + " written, " + bad.get() + " skipped");
        }
    }

    /** True when {@link #stop()} was called or is called within {@code bound}. */
    private boolean awaitStop(Duration bound) throws IOException {
        try {
            return stopped.await(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted while the last line waited for a stop");
        }
    }

    /**
     * What {@code KafkaProducer.close(timeout)} reports to the callbacks of the records still pending when the timeout
     * runs out ({@code RecordAccumulator.abortIncompleteBatches}: a plain {@link KafkaException}, this message): our own
     * close after a stop, not an answer from Kafka.
     */
    private boolean abandonedAtClose(Exception ex) {
        return (stop.get() || gaveUp.get()) && ex.getClass() == KafkaException.class
                && "Producer is closed forcefully.".equals(ex.getMessage());
    }

    /**
     * Prints the summary unless it was printed already, and returns the exit code: {@link #EXIT_INTERRUPTED} after a
     * stop, 2 after a send error, 1 when a line was skipped, else 0.
     */
    int summary() {
        boolean first = summarized.compareAndSet(false, true);
        int exit;
        if (stop.get()) {
            exit = EXIT_INTERRUPTED;
            if (first) {
                err.flush();
                out.println("produce: interrupted: " + counts(" within " + CLOSE_BOUND.toSeconds() + " s"));
            }
        } else if (sendError.get() != null || timedOut.get() != null || gaveUp.get()) {
            exit = ToolErrors.EXIT_CANNOT_RUN;
            if (first) {
                err.flush();
                err.println((sendError.get() != null ? "produce: stopped after a failed write: "
                        : timedOut.get() != null ? "produce: stopped, Kafka did not confirm writes within delivery.timeout.ms: "
                        : "produce: stopped, Kafka did not confirm writes within " + confirmBound.toSeconds() + " s: ")
                        + counts(""));
            }
        } else {
            exit = bad.get() == 0 ? 0 : 1;
            if (first) {
                out.printf("produce: %d notifications written to %s, %d bad lines skipped (of %d)%n", written.get(), target,
                        bad.get(), total.get());
            }
        }
        out.flush();
        err.flush();
        summaryPrinted.countDown();
        return exit;
    }

    /** What became of each line and record: written, bad, failed (with the first error), not confirmed, not read. */
    private String counts(String confirmBound) {
        long unconfirmed = handed.get() - written.get() - failed.get();
        Exception firstError = sendError.get();
        return written.get() + " notifications written to " + target + ", " + bad.get() + " bad lines skipped (of "
                + total.get() + " read), " + failed.get() + " failed"
                + (firstError == null ? "" : " (first error: " + RedactingCliErrors.describe(firstError) + ")")
                + ", " + unconfirmed + " handed to Kafka but not confirmed" + confirmBound + " (may or may not be written"
                + (timedOut.get() == null ? "" : "; first: " + RedactingCliErrors.describe(timedOut.get())) + "), "
                + notRead();
    }

    /** The lines not read: counted for a file; for stdin, whether it was read to its end, and an incomplete last line. */
    private String notRead() {
        if (linesInInput >= 0) {
            return Math.max(0, linesInInput - linesRead.get()) + " lines not read (of " + linesInInput + ")";
        }
        if (inputEnded) {
            return lastLineIncomplete ? INCOMPLETE_LAST_LINE : "all of stdin read";
        }
        BoundedLines in = input; // the loop is blocked reading: inside a line when bytes of it came without a line end
        return "the rest of stdin not read" + (in != null && in.pendingBytes() > 0 ? ", " + INCOMPLETE_LAST_LINE : "");
    }

    static Notification parse(NotificationJson parser, BoundedLines.Line line) {
        if (line.unreadable()) {
            throw BoundedLines.unreadable(line); // over the bound, or not UTF-8
        }
        return parser.parse(line.number(), line.text());
    }

    /** A blank line or a {@code //} comment: not a notification, not counted. */
    static boolean skip(String line) {
        String t = line.strip();
        return t.isEmpty() || t.startsWith("//");
    }
}
