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
 * configured. Called once, on the command's thread, before anything logs; logback then owns the appender.
 */
public final class LogRouting {
    private LogRouting() {
    }

    /**
     * @return true when the lines now go to {@code file}; false when logback is not the SLF4J backend (then
     *     nothing changed)
     */
    public static boolean toFile(Path file) {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx)) {
            return false;
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
            a.stop();
        }
        return true;
    }
}
