package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.Notification;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * {@code sluice produce}'s loop and summary ({@link ProduceRun}) when Ctrl-C or SIGTERM stops it, with Kafka's
 * {@link MockProducer}: the summary still says what was written, skipped, left unconfirmed and not read, exit code 130,
 * and records handed to the producer are closed with a bound. The stop is what the command's shutdown hook does
 * ({@link ProduceRun#stopFromHook}); a real SIGINT to a child JVM is not sent here (it needs a broker, and the moment
 * it lands would be a race): the hook is called directly, at a chosen point of the loop.
 */
class ProduceRunTest {
    private static final Serializer<Notification> NO_BYTES = (topic, n) -> new byte[0];

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private static String line(int i) {
        return "{\"id\":\"n-" + i + "\",\"bot_id\":\"alerts\",\"chat_id\":\"" + i + "\",\"kind\":\"k\",\"text\":\"t\"}";
    }

    private static InputStream lines(String... lines) {
        return new ByteArrayInputStream((String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
    }

    private ProduceRun run(long linesInInput) {
        return new ProduceRun(new NotificationJson(Clock.systemUTC()), "notifications", linesInInput,
                new PrintWriter(out, true), new PrintWriter(err, true));
    }

    private Progress none() {
        return Progress.open(Progress.Mode.NONE, "produce", 0, new PrintWriter(err, true));
    }

    /** A MockProducer that, on its {@code n}-th send, acts as the shutdown hook would at that moment (stop, nothing more). */
    private static final class StopAt extends MockProducer<String, Notification> {
        private final int n;
        private ProduceRun run;
        private int sends;

        StopAt(boolean autoComplete, int n) {
            super(autoComplete, null, new StringSerializer(), NO_BYTES);
            this.n = n;
        }

        @Override
        public synchronized Future<RecordMetadata> send(ProducerRecord<String, Notification> record, Callback callback) {
            Future<RecordMetadata> f = super.send(record, callback);
            if (++sends == n) {
                run.stop();
            }
            return f;
        }
    }

    @Test
    void withoutAStopTheSummaryAndExitCodeAreAsBefore() throws IOException {
        ProduceRun run = run(3);
        MockProducer<String, Notification> producer = new MockProducer<>(true, null, new StringSerializer(), NO_BYTES);
        run.send(new BoundedLines(lines(line(1), "{\"id\":\"bad\"}", line(3)), BoundedLines.MAX_LINE_BYTES), producer, none());
        assertThat(run.summary()).isEqualTo(1);
        assertThat(out.toString()).isEqualTo("produce: 2 notifications written to notifications, 1 bad lines skipped (of 3)\n");
        assertThat(err.toString()).startsWith("produce: skipped line 2, field 'bot_id': missing");
    }

    @Test
    void aStopEndsTheLoopAtTheNextLineAndTheSummaryCountsWhatWasWrittenSkippedAndNotRead() throws IOException {
        ProduceRun run = run(6);
        StopAt producer = new StopAt(true, 2);
        producer.run = run;
        run.send(new BoundedLines(lines(line(1), "not json", line(3), line(4), line(5), line(6)), BoundedLines.MAX_LINE_BYTES),
                producer, none());

        assertThat(run.summary()).isEqualTo(ProduceRun.EXIT_INTERRUPTED).isEqualTo(130);
        assertThat(producer.history()).extracting(r -> r.value().getId()).containsExactly("n-1", "n-3");
        assertThat(producer.closed()).as("closed with its bound").isTrue();
        assertThat(out.toString()).isEqualTo("produce: interrupted: 2 notifications written to notifications, 1 bad lines"
                + " skipped (of 3 read), 0 failed, 0 handed to Kafka but not confirmed within 5 s (may or may not be written),"
                + " 3 lines not read (of 6)\n");
        assertThat(run.summary()).as("printed once").isEqualTo(130);
        assertThat(out.toString().lines()).hasSize(1);
    }

    @Test
    void recordsHandedOverButNotConfirmedWithinTheBoundAreCountedAsSuch() throws IOException {
        ProduceRun run = run(5);
        StopAt producer = new StopAt(false, 3);
        producer.run = run;
        run.send(new BoundedLines(lines(IntStream.rangeClosed(1, 5).mapToObj(ProduceRunTest::line).toArray(String[]::new)),
                BoundedLines.MAX_LINE_BYTES), producer, none());
        producer.completeNext(); // the broker confirmed one of the three

        assertThat(run.summary()).isEqualTo(130);
        assertThat(out.toString()).contains("interrupted: 1 notifications written to notifications, 0 bad lines skipped (of 3 read),"
                + " 0 failed, 2 handed to Kafka but not confirmed within 5 s").contains("2 lines not read (of 5)");
    }

    @Test
    void whenTheLoopIsBlockedReadingStdinTheHookClosesTheProducerAndPrintsTheSummaryOnce() throws Exception {
        PipedOutputStream typing = new PipedOutputStream();
        PipedInputStream stdin = new PipedInputStream(typing);
        ProduceRun run = run(-1);
        MockProducer<String, Notification> producer = new MockProducer<>(true, null, new StringSerializer(), NO_BYTES);
        AtomicReference<Integer> loopExit = new AtomicReference<>();
        Thread loop = new Thread(() -> {
            try {
                run.send(new BoundedLines(stdin, BoundedLines.MAX_LINE_BYTES), producer, none());
                loopExit.set(run.summary());
            } catch (IOException e) {
                loopExit.set(-1);
            }
        }, "produce-loop");
        loop.start();
        typing.write((line(1) + "\n" + line(2) + "\n").getBytes(StandardCharsets.UTF_8));
        typing.flush();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (producer.history().size() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(10); // until both lines were handed over, bounded
        }
        assertThat(producer.history()).hasSize(2);

        long start = System.nanoTime();
        run.stopFromHook(); // the loop waits in read(): no more input, no end of input
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("bounded").isLessThan(
                ProduceRun.CLOSE_BOUND.toMillis() + 3_000);
        assertThat(producer.closed()).isTrue();
        assertThat(out.toString()).isEqualTo("produce: interrupted: 2 notifications written to notifications, 0 bad lines"
                + " skipped (of 2 read), 0 failed, 0 handed to Kafka but not confirmed within 5 s (may or may not be written),"
                + " the rest of stdin not read\n");

        typing.write((line(3) + "\n").getBytes(StandardCharsets.UTF_8)); // the read returns; the loop sees the stop
        typing.close();
        loop.join(10_000);
        assertThat(loop.isAlive()).isFalse();
        assertThat(loopExit.get()).isEqualTo(130);
        assertThat(producer.history()).as("nothing sent after the stop").hasSize(2);
        assertThat(out.toString().lines().collect(Collectors.toList())).as("the summary once").hasSize(1);
        assertThat(err.toString()).isEmpty();
    }

    /** Starts the loop on {@code stdin} in a thread of its own; the exit code it ends with goes to {@code exit}. */
    private Thread loopOn(ProduceRun run, InputStream stdin, MockProducer<String, Notification> producer,
                          AtomicReference<Integer> exit) {
        Thread loop = new Thread(() -> {
            try {
                run.send(new BoundedLines(stdin, BoundedLines.MAX_LINE_BYTES), producer, none());
                exit.set(run.summary());
            } catch (IOException e) {
                exit.set(-1);
            }
        }, "produce-loop");
        loop.start();
        return loop;
    }

    /** Stdin whose writer is cut off: its bytes, then, on {@link #end}, the end of input. */
    private static final class EndOnCue extends InputStream {
        private final byte[] data;
        private final CountDownLatch end = new CountDownLatch(1);
        private volatile boolean ended;
        private int pos;

        EndOnCue(String data) {
            this.data = data.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (pos < data.length) {
                int n = Math.min(len, data.length - pos);
                System.arraycopy(data, pos, b, off, n);
                pos += n;
                return n;
            }
            try {
                end.await();
            } catch (InterruptedException e) {
                throw new java.io.InterruptedIOException();
            }
            ended = true;
            return -1;
        }
    }

    @Test
    void aHalfLineAtTheEndOfStdinThatComesJustBeforeTheStopIsNotABadLineAndIsNotSent() throws Exception {
        // Ctrl-C reaches the writer too, which may die first: stdin ends inside a line, the stop comes a moment later.
        // Found from outside: the half line was parsed at once and counted bad
        EndOnCue stdin = new EndOnCue(line(1) + "\n" + line(2) + "\n{\"id\":\"n-3\",\"bot_");
        ProduceRun run = run(-1);
        MockProducer<String, Notification> producer = new MockProducer<>(true, null, new StringSerializer(), NO_BYTES);
        AtomicReference<Integer> exit = new AtomicReference<>();
        Thread loop = loopOn(run, stdin, producer, exit);
        await().atMost(Duration.ofSeconds(10)).until(() -> producer.history().size() == 2);

        stdin.end.countDown(); // the writer is gone
        // the loop has the half line: it waits for a stop (a timed wait), or, before the fix, it was done with it
        await().atMost(Duration.ofSeconds(10)).until(() -> stdin.ended
                && (loop.getState() == Thread.State.TIMED_WAITING || !loop.isAlive()));
        run.stop(); // the JVM's shutdown hook, a moment later
        loop.join(10_000);

        assertThat(loop.isAlive()).isFalse();
        assertThat(err.toString()).as("not reported as a bad line").isEmpty();
        assertThat(exit.get()).isEqualTo(130);
        assertThat(producer.history()).hasSize(2);
        assertThat(out.toString()).isEqualTo("produce: interrupted: 2 notifications written to notifications, 0 bad lines"
                + " skipped (of 2 read), 0 failed, 0 handed to Kafka but not confirmed within 5 s (may or may not be written),"
                + " an incomplete last line (no line end) left unsent\n");
    }

    @Test
    void aHalfLineAtTheEndOfStdinAfterAStopIsNotABadLineAndIsNotSent() throws Exception {
        // the other order of the same Ctrl-C: the stop first, then the end of stdin inside a line
        PipedOutputStream typing = new PipedOutputStream();
        PipedInputStream stdin = new PipedInputStream(typing);
        ProduceRun run = run(-1);
        MockProducer<String, Notification> producer = new MockProducer<>(true, null, new StringSerializer(), NO_BYTES);
        AtomicReference<Integer> exit = new AtomicReference<>();
        Thread loop = loopOn(run, stdin, producer, exit);
        typing.write((line(1) + "\nnot json, and no line end").getBytes(StandardCharsets.UTF_8));
        typing.flush();
        await().atMost(Duration.ofSeconds(10)).until(() -> producer.history().size() == 1);

        run.stop();
        typing.close();
        loop.join(10_000);

        assertThat(loop.isAlive()).isFalse();
        assertThat(exit.get()).isEqualTo(130);
        assertThat(err.toString()).isEmpty();
        assertThat(out.toString()).isEqualTo("produce: interrupted: 1 notifications written to notifications, 0 bad lines"
                + " skipped (of 1 read), 0 failed, 0 handed to Kafka but not confirmed within 5 s (may or may not be written),"
                + " an incomplete last line (no line end) left unsent\n");
    }

    @Test
    void aStopWhileStdinStaysOpenInsideALineSaysTheIncompleteLineWasNotSent() throws Exception {
        // the writer is not cut off (or not yet): the hook prints the summary while the loop waits inside a line
        PipedOutputStream typing = new PipedOutputStream();
        PipedInputStream stdin = new PipedInputStream(typing);
        ProduceRun run = run(-1);
        MockProducer<String, Notification> producer = new MockProducer<>(true, null, new StringSerializer(), NO_BYTES);
        AtomicReference<Integer> exit = new AtomicReference<>();
        Thread loop = loopOn(run, stdin, producer, exit);
        typing.write((line(1) + "\n{\"id\":\"n-2\"").getBytes(StandardCharsets.UTF_8));
        typing.flush();
        // line 1 sent, the half line taken from the pipe, the loop waiting in read() for the rest
        await().atMost(Duration.ofSeconds(10)).until(() -> producer.history().size() == 1 && stdin.available() == 0
                && loop.getState() == Thread.State.TIMED_WAITING);

        run.stopFromHook();
        assertThat(out.toString()).isEqualTo("produce: interrupted: 1 notifications written to notifications, 0 bad lines"
                + " skipped (of 1 read), 0 failed, 0 handed to Kafka but not confirmed within 5 s (may or may not be written),"
                + " the rest of stdin not read, an incomplete last line (no line end) left unsent\n");

        typing.close(); // then the writer goes: the loop ends without sending or counting the half line
        loop.join(10_000);
        assertThat(loop.isAlive()).isFalse();
        assertThat(exit.get()).isEqualTo(130);
        assertThat(producer.history()).hasSize(1);
        assertThat(out.toString().lines()).as("the summary once").hasSize(1);
        assertThat(err.toString()).isEmpty();
    }

    @Test
    void withoutAStopALastLineWithoutLineEndIsReadAsBefore() throws IOException {
        // a normal end of stdin: a last line without a line end is a line like any other, written or bad
        ProduceRun good = run(-1);
        MockProducer<String, Notification> producer = new MockProducer<>(true, null, new StringSerializer(), NO_BYTES);
        good.send(new BoundedLines(new ByteArrayInputStream((line(1) + "\n" + line(2)).getBytes(StandardCharsets.UTF_8)),
                BoundedLines.MAX_LINE_BYTES), producer, none());
        assertThat(good.summary()).isZero();
        assertThat(producer.history()).extracting(r -> r.value().getId()).containsExactly("n-1", "n-2");
        assertThat(out.toString()).isEqualTo("produce: 2 notifications written to notifications, 0 bad lines skipped (of 2)\n");

        out.getBuffer().setLength(0);
        ProduceRun bad = run(-1);
        bad.send(new BoundedLines(new ByteArrayInputStream((line(3) + "\n{\"id\":").getBytes(StandardCharsets.UTF_8)),
                BoundedLines.MAX_LINE_BYTES), producer, none());
        assertThat(bad.summary()).isEqualTo(1);
        assertThat(out.toString()).isEqualTo("produce: 1 notifications written to notifications, 1 bad lines skipped (of 2)\n");
        assertThat(err.toString()).startsWith("produce: skipped line 2, field '(line)': not JSON");
    }

    @Test
    void aStopBeforeTheLoopStartsPrintsTheSummaryAtOnceAndTheLoopThenSendsNothing() throws Exception {
        // Ctrl-C while the command still checks the registry and Kafka: found from outside, no summary at all
        ProduceRun run = run(2);
        run.stopFromHook();
        assertThat(out.toString()).isEqualTo("produce: interrupted: 0 notifications written to notifications, 0 bad lines"
                + " skipped (of 0 read), 0 failed, 0 handed to Kafka but not confirmed within 5 s (may or may not be written),"
                + " 2 lines not read (of 2)\n");

        // the command's thread gets to the loop after the hook (the JVM had not ended yet): nothing is sent
        MockProducer<String, Notification> producer = new MockProducer<>(true, null, new StringSerializer(), NO_BYTES);
        run.send(new BoundedLines(lines(line(1), line(2)), BoundedLines.MAX_LINE_BYTES), producer, none());
        assertThat(producer.history()).isEmpty();
        assertThat(producer.closed()).isTrue();
        assertThat(run.summary()).isEqualTo(130);
        assertThat(out.toString().lines()).as("the summary once").hasSize(1);
    }

    @Test
    void aSendThatFailsBecauseTheHookClosedTheProducerIsNotAnError() throws IOException {
        ProduceRun run = run(3);
        MockProducer<String, Notification> producer = new MockProducer<>(true, null, new StringSerializer(), NO_BYTES) {
            @Override
            public synchronized Future<RecordMetadata> send(ProducerRecord<String, Notification> record, Callback callback) {
                if (record.value().getId().equals("n-2")) {
                    run.stop();
                    close(); // as the hook does while this send waits for metadata
                }
                return super.send(record, callback); // MockProducer: "already closed"
            }
        };
        run.send(new BoundedLines(lines(line(1), line(2), line(3)), BoundedLines.MAX_LINE_BYTES), producer, none());
        assertThat(run.summary()).isEqualTo(130);
        assertThat(out.toString()).contains("interrupted: 1 notifications written").contains("0 handed to Kafka but not confirmed")
                .contains("1 lines not read (of 3)");
        assertThat(List.of(err.toString())).containsExactly("");
    }
}
