package dev.sluice.sender.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.sluice.sender.budget.LettuceResources;
import io.lettuce.core.RedisException;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.netty.util.HashedWheelTimer;
import io.netty.util.concurrent.EventExecutor;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A connect refused while the {@link ClientResources} live on (the sent marks' resources live as long as the sender,
 * and every read during a Redis outage tries to connect again): Lettuce's handshake timeout of each attempt is still
 * pending on the resources' timer when the attempt fails; it must not fire onto the event loop of a client already
 * shut down. Before the fix it did, and Netty logged {@code ERROR ... Failed to submit a listener notification task.
 * Event loop shut down?} with a 22-line stack trace per attempt (a newcomer saw 246 of them in 16 s on a sender
 * started while Redis was down).
 */
class RedisSessionRefusedConnectTest {

    @Test
    void refusedConnectsLogNoRejectedListenerNotification() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // closed again: connects are refused
        }
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        root.addAppender(appender);
        ClientResources resources = LettuceResources.create(null, "test");
        try {
            RedisEndpoint endpoint = RedisEndpoint.parse("redis://127.0.0.1:" + port);
            Duration timeout = Duration.ofMillis(200);
            int attempts = 5;
            for (int i = 0; i < attempts; i++) {
                assertThrows(RedisException.class,
                        () -> RedisSession.connect(endpoint, StringCodec.UTF8, timeout, resources));
            }
            // Every handshake timeout has fired (bounded wait on the timer itself) ...
            HashedWheelTimer timer = (HashedWheelTimer) resources.timer();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (timer.pendingTimeouts() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(0, timer.pendingTimeouts(), "handshake timeouts still pending after 10 s");
            // ... and what each handed to the computation executors has run (FIFO per executor).
            for (EventExecutor e : resources.eventExecutorGroup()) {
                e.submit(() -> { }).get(5, TimeUnit.SECONDS);
            }
            // (each fired timeout closed its channel and added a listener on the channel's event loop there: on a
            // loop already terminated, Netty logs the rejection at once, on that computation thread)
        } finally {
            resources.shutdown(0, 2, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
            root.detachAppender(appender);
        }
        List<String> errors = appender.list.stream()
                .filter(e -> e.getLevel().isGreaterOrEqual(ch.qos.logback.classic.Level.ERROR))
                .map(e -> e.getLoggerName() + ": " + e.getFormattedMessage())
                .toList();
        assertTrue(errors.isEmpty(), "ERROR lines: " + errors.size() + " " + errors.stream().limit(3).toList());
    }
}
