package dev.sluice.app.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Marker;

/**
 * Lets one logger write at most one line per {@code intervalMs} at levels up to WARN (ERROR always passes), e.g.
 * Kafka's {@code NetworkClient}, which writes "Connection to node ... could not be established" 8 to 40 times a
 * second per client while Kafka is unreachable (a newcomer's sender: 6,851 lines in 2.8 min). The outage still shows
 * (a line every interval names the node), without burying every other line. Declared in logback.xml:
 * <pre>{@code <turboFilter class="dev.sluice.app.logging.LoggerRateFilter">
 *   <loggerName>org.apache.kafka.clients.NetworkClient</loggerName><intervalMs>30000</intervalMs>
 * </turboFilter>}</pre>
 * Thread-safe (an atomic): logback calls it on every logging thread.
 */
public final class LoggerRateFilter extends TurboFilter {
    private String loggerName = "";
    private long intervalMs = 30_000;
    private final AtomicLong lastMs = new AtomicLong(Long.MIN_VALUE);

    public void setLoggerName(String loggerName) {
        this.loggerName = loggerName;
    }

    public void setIntervalMs(long intervalMs) {
        this.intervalMs = intervalMs;
    }

    @Override
    public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
        if (level == null || format == null || level.isGreaterOrEqual(Level.ERROR) || !level.isGreaterOrEqual(Level.WARN)
                || !logger.getName().equals(loggerName)) {
            return FilterReply.NEUTRAL; // isEnabled checks (format null) and other loggers are not counted
        }
        long now = System.currentTimeMillis();
        long last = lastMs.get();
        if ((last == Long.MIN_VALUE || now - last >= intervalMs) && lastMs.compareAndSet(last, now)) {
            return FilterReply.NEUTRAL;
        }
        return FilterReply.DENY;
    }
}
