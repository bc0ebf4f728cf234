package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.sun.net.httpserver.HttpServer;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.sender.idempotency.InMemorySentMarks;
import dev.sluice.sender.provider.BotToken;
import dev.sluice.sender.telegram.TelegramTransport;
import dev.sluice.testkit.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A provider fault is said in the sender's log, bounded: the processor with the real Telegram transport against a local
 * HTTP server answering 502 (or nothing listening), then 200. Before, only the metric moved and the log said nothing.
 */
class ProviderFaultLogTest {
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("123456789");
    private static final String BAD_GATEWAY = "{\"ok\":false,\"error_code\":502,\"description\":\"Bad Gateway: upstream"
            + " https://api.telegram.org/bot" + TOKEN + "/sendMessage\"}";
    private static final String OK = "{\"ok\":true,\"result\":{\"message_id\":7,\"date\":1,\"chat\":{\"id\":42,"
            + "\"type\":\"private\"},\"text\":\"hi\"}}";

    private final ManualClock clock = new ManualClock();
    private final Fakes.RecordingSink sink = new Fakes.RecordingSink();
    private final TopicPartition tp = new TopicPartition("outbox.live", 0);
    private final AtomicInteger requests = new AtomicInteger();
    /** Whether the n-th request (from 0) is answered 502. */
    private volatile IntPredicate fails = n -> true;
    private HttpServer server;
    private TelegramTransport transport;
    private final Logger logger = (Logger) LoggerFactory.getLogger(ProviderCall.class);
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            boolean fail = fails.test(requests.getAndIncrement());
            byte[] bytes = (fail ? BAD_GATEWAY : OK).getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(fail ? 502 : 200, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        server.start();
        appender.start();
        logger.addAppender(appender);
    }

    @AfterEach
    void stop() {
        logger.detachAppender(appender);
        if (transport != null) {
            transport.close();
        }
        server.stop(0);
    }

    private DeliveryProcessor processor(String apiUrl) {
        transport = new TelegramTransport(apiUrl, Map.of("bot", new BotToken(TOKEN)), Duration.ofSeconds(2),
                Duration.ofSeconds(2));
        // the breaker stays closed (a window larger than the test): every message calls the provider
        SenderConfig config = Fakes.config("budget.global.rate.per.s", "1000", "budget.global.burst", "1000",
                "sender.breaker.window.calls", "100000", "sender.max.attempts", "3");
        return new DeliveryProcessor(config, new Fakes.ScriptedBudget(), transport, sink,
                new InMemorySentMarks(Duration.ofDays(1), clock), Fakes.metrics(new SimpleMeterRegistry()), clock,
                new SplittableRandom(7), new BotSlots(4), new ChatRegistry(1000));
    }

    private DeliveryProcessor processor() {
        return processor("http://127.0.0.1:" + server.getAddress().getPort() + "/bot");
    }

    private PendingMessage pending(String id) {
        return new PendingMessage(tp, 0, Fakes.message(id, "42", clock.instant().minusMillis(50), null));
    }

    private List<ILoggingEvent> lines() {
        return appender.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.INFO)).toList();
    }

    private List<String> texts() {
        return lines().stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    @Test
    void a_502_storm_logs_its_start_once_then_a_bounded_summary_then_its_end_never_the_token() {
        DeliveryProcessor processor = processor();
        // 60 s of 502s, a call a second: 60 failed calls, every third one a message's last attempt (max.attempts 3)
        for (int i = 0; i < 20; i++) {
            PendingMessage p = pending("m" + i);
            for (int attempt = 0; attempt < 3; attempt++) {
                processor.process(p);
                clock.advance(Duration.ofSeconds(1));
            }
        }
        assertThat(sink.results).hasSize(20).allMatch(r -> r.getStatus() == DeliveryStatus.FAILED);
        List<String> during = texts();
        assertThat(during.get(0)).startsWith("provider calls of bot bot fail: HTTP 502 (Bad Gateway: upstream")
                .contains("[redacted]");
        assertThat(lines().get(0).getLevel()).isEqualTo(Level.WARN);
        assertThat(during.stream().filter(t -> t.startsWith("provider calls of bot bot fail:"))).hasSize(1);
        // one summary per 10 s; one given-up line per 10 s (given up every 3 s) with the count of the others
        assertThat(during.stream().filter(t -> t.startsWith("provider calls of bot bot still fail"))).hasSize(5)
                .allMatch(t -> t.contains("HTTP 502: "));
        assertThat(during.stream().filter(t -> t.contains(" of bot bot FAILED: gave up after 3 failed attempts: "
                + "Bad Gateway"))).hasSize(5);
        assertThat(during).hasSize(1 + 5 + 5);

        fails = n -> false;
        for (int i = 0; i < 20; i++) { // the provider answers again: one line after a quiet interval, then none
            processor.process(pending("ok" + i));
            clock.advance(Duration.ofSeconds(1));
        }
        // the fault ends at the first answer a quiet interval (10 s) after its last failure; the 20 answers before
        // count as its successes, and the summary of its last seconds comes with the first of them
        List<String> after = texts().subList(during.size(), texts().size());
        assertThat(after).hasSize(2);
        assertThat(after.get(0))
                .startsWith("provider calls of bot bot still fail (for 60 s): in the last 10 s 9 failed");
        assertThat(after.get(1)).startsWith("provider calls of bot bot succeed again: they failed for "
                + "59 s, 60 calls failed (HTTP 502: 60), 9 succeeded meanwhile; last failure: Bad Gateway");
        assertThat(lines().get(lines().size() - 1).getLevel()).isEqualTo(Level.INFO);
        assertThat(texts().stream().filter(t -> t.startsWith("provider calls of bot bot still fail"))).hasSize(6);
        assertThat(texts()).noneMatch(t -> t.contains(TOKEN) || t.contains(TOKEN.substring(TOKEN.indexOf(':') + 1)));
    }

    @Test
    void half_the_calls_failing_is_one_fault_not_a_start_and_end_at_every_success() {
        fails = n -> n % 2 == 0;
        DeliveryProcessor processor = processor();
        for (int i = 0; i < 60; i++) { // 60 s, a call a second, every other one 502
            processor.process(pending("m" + i));
            clock.advance(Duration.ofSeconds(1));
        }
        fails = n -> false;
        for (int i = 0; i < 20; i++) {
            processor.process(pending("ok" + i));
            clock.advance(Duration.ofSeconds(1));
        }
        List<String> texts = texts();
        assertThat(texts.stream().filter(t -> t.startsWith("provider calls of bot bot fail: HTTP 502"))).hasSize(1);
        assertThat(texts.stream().filter(t -> t.startsWith("provider calls of bot bot succeed again"))).singleElement()
                .satisfies(t -> assertThat(t).contains("30 calls failed (HTTP 502: 30), 38 succeeded meanwhile"));
        assertThat(texts.stream().filter(t -> t.startsWith("provider calls of bot bot still fail")))
                .hasSize(6).allMatch(t -> t.contains("failed (HTTP 502: ") && t.contains("succeeded"));
        assertThat(texts).hasSize(8);
    }

    @Test
    void connection_refused_is_named_a_connection_error_with_the_bot_and_no_token() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // closed again: nothing listens there
        }
        DeliveryProcessor processor = processor("http://127.0.0.1:" + port + "/bot");
        for (int i = 0; i < 40; i++) {
            processor.process(pending("m" + i));
            clock.advance(Duration.ofMillis(100));
        }
        List<String> texts = texts();
        assertThat(texts.get(0)).startsWith("provider calls of bot bot fail: connection error (");
        assertThat(texts).hasSizeLessThanOrEqualTo(2)
                .noneMatch(t -> t.contains(TOKEN) || t.contains(TOKEN.substring(TOKEN.indexOf(':') + 1)));
    }
}
