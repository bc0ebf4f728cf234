package dev.sluice.app.logging;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.OutputStreamAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** A bot token sent through every log path must not appear in the output, in text or JSON. */
class RedactingEncoderTest {
    /** Shaped like a real Telegram token: bot id, colon, 35 URL-safe characters. */
    // Built from parts so the source holds no token-shaped literal (secret scanners); the value is fake.
    private static final String TOKEN = "7012345678:" + "AAF3kq_Zx-9sVbWcTqLp0YhN2mRd8eJuGo4";
    private static final String SECRET_PART = TOKEN.substring(TOKEN.indexOf(':') + 1);
    private static final String URL = "https://api.telegram.org/bot" + TOKEN + "/sendMessage";

    @ParameterizedTest
    @ValueSource(strings = {"text", "json"})
    void noTokenSurvivesAnyLogPath(String format) {
        LoggerContext ctx = newContext();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RedactingEncoder encoder = new RedactingEncoder();
        encoder.setContext(ctx);
        encoder.setFormat(format);
        encoder.start();
        OutputStreamAppender<ILoggingEvent> appender = new OutputStreamAppender<>();
        appender.setContext(ctx);
        appender.setEncoder(encoder);
        appender.setOutputStream(out);
        appender.start();
        Logger log = ctx.getLogger("dev.sluice.sender.TelegramTransport");
        log.addAppender(appender);

        logEveryPath(ctx, log);
        appender.stop();

        String written = out.toString(StandardCharsets.UTF_8);
        assertNoToken(written);
        // The lines are there and still useful: the text around the token survives.
        assertThat(written).contains("message path", "argument path", "cause chain", "api.telegram.org", "bot[redacted]",
                "mdc-marker", "suppressed path");
        assertThat(written.split("\n")).hasSizeGreaterThanOrEqualTo(format.equals("json") ? 5 : 10);
    }

    @Test
    void theShippedLogbackXmlRedactsInJsonMode() throws Exception {
        String written = captureStdout(() -> {
            LoggerContext ctx = configureShippedXml("json");
            logEveryPath(ctx, ctx.getLogger("dev.sluice.app.SenderCommand"));
            ctx.stop();
        });
        assertNoToken(written);
        ObjectMapper json = new ObjectMapper();
        List<String> lines = written.lines().filter(l -> !l.isBlank()).toList();
        assertThat(lines).hasSize(5);
        for (String line : lines) {
            JsonNode node = json.readTree(line); // every line is one JSON object
            assertThat(node.get("level").asText()).isIn("INFO", "WARN", "ERROR");
        }
        assertThat(json.readTree(lines.get(1)).get("mdc").get("chat").asText()).contains("[redacted]");
        assertThat(json.readTree(lines.get(2)).get("throwable").get("className").asText()).isEqualTo(IllegalStateException.class.getName());
    }

    @Test
    void theShippedLogbackXmlRedactsInTextModeAndQuietsKafka() throws Exception {
        String written = captureStdout(() -> {
            LoggerContext ctx = configureShippedXml("text");
            logEveryPath(ctx, ctx.getLogger("dev.sluice.app.SenderCommand"));
            ctx.getLogger("org.apache.kafka.clients.consumer.ConsumerConfig").info("ConsumerConfig values: ...");
            ctx.stop();
        });
        assertNoToken(written);
        assertThat(written).contains("INFO  dev.sluice.app.SenderCommand [main] message path [redacted]")
                .contains("at dev.sluice.app.logging.RedactingEncoderTest")
                .doesNotContain("ConsumerConfig values");
    }

    private static void logEveryPath(LoggerContext ctx, org.slf4j.Logger log) {
        log.info("message path " + TOKEN);
        // Each LoggerContext has its own MDC adapter (logback 1.5); the global MDC facade uses the default context's.
        ctx.getMDCAdapter().put("chat", "mdc-marker " + TOKEN);
        try {
            log.info("argument path {} and {}", TOKEN, URL);
        } finally {
            ctx.getMDCAdapter().remove("chat");
        }
        Exception cause = new java.io.IOException("connect failed for " + URL);
        log.warn("exception path", new IllegalStateException("send failed: token " + TOKEN, cause));
        Exception deep = new RuntimeException("outer", new RuntimeException("cause chain",
                new IllegalArgumentException("root " + TOKEN)));
        log.error("cause chain path", deep);
        Exception suppressed = new RuntimeException("suppressed path");
        suppressed.addSuppressed(new IOException("suppressed " + TOKEN));
        log.error("suppressed path " + URL, suppressed);
    }

    private static void assertNoToken(String written) {
        assertThat(written).isNotBlank().doesNotContain(TOKEN).doesNotContain(SECRET_PART).contains("[redacted]");
    }

    private static LoggerContext configureShippedXml(String format) throws Exception {
        LoggerContext ctx = newContext();
        ctx.putProperty("SLUICE_LOG_FORMAT", format);
        JoranConfigurator configurator = new JoranConfigurator();
        configurator.setContext(ctx);
        URL xml = RedactingEncoder.class.getResource("/logback.xml");
        assertThat(xml).as("logback.xml on the main classpath").isNotNull();
        configurator.doConfigure(xml);
        assertThat(ctx.getStatusManager().getCopyOfStatusList()).noneMatch(s -> s.getLevel() >= 2);
        return ctx;
    }

    /** A context of its own (not the test JVM's), with the MDC adapter a fresh context lacks. */
    private static LoggerContext newContext() {
        LoggerContext ctx = new LoggerContext();
        ctx.setMDCAdapter(new ch.qos.logback.classic.util.LogbackMDCAdapter());
        ctx.start();
        return ctx;
    }

    private interface Action {
        void run() throws Exception;
    }

    /** The shipped logback.xml logs to stderr (stdout carries command output); capture both. */
    private static String captureStdout(Action action) throws Exception {
        PrintStream originalOut = System.out;
        PrintStream originalErr = System.err;
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        PrintStream capture = new PrintStream(buffer, true, StandardCharsets.UTF_8);
        System.setOut(capture);
        System.setErr(capture);
        try {
            action.run();
        } finally {
            System.setOut(originalOut);
            System.setErr(originalErr);
        }
        return buffer.toString(StandardCharsets.UTF_8);
    }
}
