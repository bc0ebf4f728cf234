package dev.sluice.app.tools;

import java.io.PrintWriter;
import java.time.Duration;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;

/**
 * Progress of long CLI work: a progress bar (me.tongfei:progressbar) on an interactive terminal, plain
 * lines otherwise (a pipe, a file, CI logs, a container), so logs stay readable. Units are records.
 */
public interface Progress extends AutoCloseable {

    /** How to show progress; {@link #AUTO} picks BAR when {@code System.console() != null}, else PLAIN. */
    enum Mode { AUTO, BAR, PLAIN, NONE }

    /** Adds {@code n} done units. */
    void step(long n);

    /** Sets the expected total (it may grow as more work is found). */
    void max(long total);

    /** A short status shown next to the bar, or appended to the plain line. */
    void message(String text);

    @Override
    void close();

    /**
     * @param task name shown before the bar or at the start of each line
     * @param out where plain lines go (the command's stderr, so stdout carries only the summary); the bar
     *     draws on {@code System.err}, the terminal
     */
    static Progress open(Mode mode, String task, long total, PrintWriter out) {
        Mode m = mode == Mode.AUTO ? (System.console() != null ? Mode.BAR : Mode.PLAIN) : mode;
        return switch (m) {
            case BAR -> new Bar(task, total);
            case PLAIN -> new Lines(task, total, out, Duration.ofSeconds(2));
            default -> new Lines(task, total, null, Duration.ZERO);
        };
    }

    /** The terminal bar. */
    final class Bar implements Progress {
        private final ProgressBar bar;

        Bar(String task, long total) {
            bar = new ProgressBarBuilder().setTaskName(task).setInitialMax(total).setUnit(" rec", 1).showSpeed()
                    .setConsumer(new ConsoleProgressBarConsumer(System.err)).build();
        }

        @Override
        public void step(long n) {
            bar.stepBy(n);
        }

        @Override
        public void max(long total) {
            bar.maxHint(total);
        }

        @Override
        public void message(String text) {
            bar.setExtraMessage(" " + text);
        }

        @Override
        public void close() {
            bar.close();
        }
    }

    /** One line at most every {@code every}, and a last one at close: "replay: 1200/5000 records (24%) ...". */
    final class Lines implements Progress {
        private final String task;
        private final PrintWriter out;
        private final long everyNanos;
        private long done;
        private long total;
        private String message = "";
        private long lastPrint = System.nanoTime();

        Lines(String task, long total, PrintWriter out, Duration every) {
            this.task = task;
            this.total = total;
            this.out = out;
            this.everyNanos = every.toNanos();
        }

        @Override
        public synchronized void step(long n) {
            done += n;
            long now = System.nanoTime();
            if (now - lastPrint >= everyNanos) {
                lastPrint = now;
                print();
            }
        }

        @Override
        public synchronized void max(long total) {
            this.total = total;
        }

        @Override
        public synchronized void message(String text) {
            this.message = text;
        }

        @Override
        public synchronized void close() {
            print();
        }

        private void print() {
            if (out == null) {
                return;
            }
            String pct = total > 0 ? String.format(" (%d%%)", Math.min(100, done * 100 / total)) : "";
            out.println(task + ": " + done + (total > 0 ? "/" + total : "") + " records" + pct
                    + (message.isEmpty() ? "" : ", " + message));
            out.flush();
        }
    }
}
