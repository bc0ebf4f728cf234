package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** A bot's provider breaker says when it opens and closes, and its probes during a long outage only at DEBUG. */
class ProviderBreakersLogTest {

    @Test
    void opening_and_closing_are_one_line_each_and_failed_probes_none() throws InterruptedException {
        Logger logger = (Logger) LoggerFactory.getLogger(ProviderBreakers.class);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        logger.addAppender(appender);
        try {
            ProviderBreakers breakers = new ProviderBreakers(50, 4, Duration.ofMillis(20), 1);
            for (int i = 0; i < 4; i++) {
                assertThat(breakers.tryAcquire("alerts")).isTrue();
                breakers.recordOutage("alerts", 5, "Bad Gateway");
            }
            assertThat(breakers.state("alerts")).isEqualTo(CircuitBreaker.State.OPEN);
            for (int probe = 0; probe < 5; probe++) { // the provider stays down: each probe fails
                Thread.sleep(30);
                assertThat(breakers.tryAcquire("alerts")).isTrue();
                breakers.recordOutage("alerts", 5, "Bad Gateway");
            }
            Thread.sleep(30);
            assertThat(breakers.tryAcquire("alerts")).isTrue();
            breakers.recordAnswer("alerts", 5);
            assertThat(breakers.state("alerts")).isEqualTo(CircuitBreaker.State.CLOSED);
            List<ILoggingEvent> lines = appender.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.INFO))
                    .toList();
            assertThat(lines).hasSize(2);
            assertThat(lines.get(0).getLevel()).isEqualTo(Level.WARN);
            assertThat(lines.get(0).getFormattedMessage()).isEqualTo("provider breaker of bot alerts opened: 100 % of "
                    + "its last calls failed (5xx, connection errors, timeouts); no call of the bot goes out for 20 ms"
                    + " at a time, then a probe");
            assertThat(lines.get(1).getLevel()).isEqualTo(Level.INFO);
            assertThat(lines.get(1).getFormattedMessage()).startsWith("provider breaker of bot alerts closed");
        } finally {
            logger.detachAppender(appender);
        }
    }
}
