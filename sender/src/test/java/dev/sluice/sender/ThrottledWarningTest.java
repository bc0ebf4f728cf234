package dev.sluice.sender;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** A condition every message meets during an outage writes one WARN line per interval, with the count left out. */
class ThrottledWarningTest {

    @Test
    void oneLinePerIntervalWithTheCountOfTheRest() {
        Logger logger = (Logger) LoggerFactory.getLogger("throttled-warning-test");
        logger.setLevel(Level.INFO);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        AtomicLong now = new AtomicLong(1_000_000);
        ThrottledWarning w = new ThrottledWarning(logger, 10_000, now::get);
        for (int i = 0; i < 490; i++) { // a 20 s outage at ~25 messages/s
            w.warn("sent mark of m-" + i + " unreadable");
            now.addAndGet(40);
        }
        List<String> lines = appender.list.stream().filter(e -> e.getLevel() == Level.WARN)
                .map(ILoggingEvent::getFormattedMessage).toList();
        assertEquals(List.of(
                "sent mark of m-0 unreadable",
                "sent mark of m-250 unreadable (249 more like it in the last 10 s, at DEBUG)"), lines);
        now.addAndGet(10_000);
        w.warn("sent mark of m-x unreadable");
        assertEquals("sent mark of m-x unreadable (239 more like it in the last 19 s, at DEBUG)",
                appender.list.get(appender.list.size() - 1).getFormattedMessage());
    }
}
