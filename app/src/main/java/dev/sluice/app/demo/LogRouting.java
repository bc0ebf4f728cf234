package dev.sluice.app.demo;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.FileAppender;
import dev.sluice.app.logging.RedactingEncoder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends the framework's log lines (Kafka's broker and clients, Kafka Streams, the topology's description, Redis and
 * registry notes) to a file instead of the terminal, so {@code sluice demo} and {@code sluice dev} show only their
 * own lines, a progress bar and the report. Replaces the root logger's appenders (the console one of
 * {@code logback.xml}) by one file appender with the same redacting encoder and format; levels stay as
 * configured. {@link #close()} puts the old appenders back (the demo runs inside tests' JVMs too). Created and
 * closed on the command's thread; logback owns the appender in between.
 */
public final class LogRouting implements AutoCloseable {
    private final ch.qos.logback.classic.Logger root;
    private final List<Appender<ILoggingEvent>> previous;
    private final FileAppender<ILoggingEvent> file;

    private LogRouting(ch.qos.logback.classic.Logger root, List<Appender<ILoggingEvent>> previous, FileAppender<ILoggingEvent> file) {
        this.root = root;
        this.previous = previous;
        this.file = file;
    }

    /**
     * @return the routing, to close when the command ends; null when logback is not the SLF4J backend (then
     *     nothing changed)
     */
    public static LogRouting toFile(Path file) {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx)) {
            return null;
        }
        ch.qos.logback.classic.Logger root = ctx.getLogger(Logger.ROOT_LOGGER_NAME);
        String format = "text";
        List<Appender<ILoggingEvent>> old = new ArrayList<>();
        for (Iterator<Appender<ILoggingEvent>> it = root.iteratorForAppenders(); it.hasNext(); ) {
            old.add(it.next());
        }
        for (Appender<ILoggingEvent> a : old) {
            if (a instanceof ch.qos.logback.core.OutputStreamAppender<ILoggingEvent> os && os.getEncoder() instanceof RedactingEncoder e) {
                format = e.getFormat();
            }
        }
        RedactingEncoder encoder = new RedactingEncoder();
        encoder.setContext(ctx);
        encoder.setFormat(format);
        encoder.start();
        FileAppender<ILoggingEvent> appender = new FileAppender<>();
        appender.setContext(ctx);
        appender.setName("FILE");
        appender.setFile(file.toAbsolutePath().toString());
        appender.setAppend(true);
        appender.setEncoder(encoder);
        appender.start();
        root.addAppender(appender);
        for (Appender<ILoggingEvent> a : old) {
            root.detachAppender(a);
        }
        return new LogRouting(root, old, appender);
    }

    /** Puts the previous appenders back and closes the file. */
    @Override
    public void close() {
        previous.forEach(root::addAppender);
        root.detachAppender(file);
        file.stop();
    }
}
