package dev.sluice.app.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.Test;

/** Kafka's NetworkClient during a Kafka outage: one WARN line per interval, other loggers and ERROR untouched. */
class LoggerRateFilterTest {

    @Test
    void oneWarnPerIntervalForTheNamedLoggerOnly() {
        LoggerContext ctx = new LoggerContext();
        LoggerRateFilter f = new LoggerRateFilter();
        f.setLoggerName("org.apache.kafka.clients.NetworkClient");
        f.setIntervalMs(60_000);
        f.start();
        ctx.addTurboFilter(f);
        ListAppender<ILoggingEvent> out = new ListAppender<>();
        out.setContext(ctx);
        out.start();
        Logger root = ctx.getLogger(Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.INFO);
        root.addAppender(out);
        Logger net = ctx.getLogger("org.apache.kafka.clients.NetworkClient");
        Logger other = ctx.getLogger("dev.sluice.sender.Outcomes");
        for (int i = 0; i < 500; i++) {
            net.warn("[Consumer clientId=c] Connection to node {} could not be established.", i);
            other.warn("other {}", i);
        }
        net.error("a NetworkClient error");
        assertEquals(1, out.list.stream().filter(e -> e.getLoggerName().equals(net.getName())
                && e.getLevel() == Level.WARN).count());
        assertEquals(500, out.list.stream().filter(e -> e.getLoggerName().equals(other.getName())).count());
        assertEquals(1, out.list.stream().filter(e -> e.getLevel() == Level.ERROR).count());
    }
}
