package dev.sluice.app.logging;

import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.encoder.Encoder;
import ch.qos.logback.core.encoder.EncoderBase;
import dev.sluice.config.SecretRedaction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * A logback encoder that writes either concise text or one JSON object per line and removes secrets
 * from the finished bytes ({@link SecretRedaction}: bot tokens, URL user info, and every value of a
 * secret config key this process holds). Redacting the encoded output, rather than
 * the message, covers every path a token can take at once: the message, its arguments, exception
 * messages and their cause chain, stack traces, MDC values and logger or thread names, in both
 * formats.
 *
 * <p>Configuration ({@code logback.xml}): {@code <format>} is {@code text} (default) or {@code json}
 * (logback's own {@link JsonEncoder}: timestamp, level, logger, thread, message, arguments, MDC,
 * throwable with cause chain); {@code <pattern>} is the text layout. An unknown format fails at
 * start-up as a logback status error naming the value, and text is used.
 */
public final class RedactingEncoder extends EncoderBase<ILoggingEvent> {
    /** The text layout when none is configured. */
    public static final String DEFAULT_PATTERN =
            "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX,UTC} %-5level %logger{30} [%thread] %msg%replace( %mdc){' $', ''}%n";

    private String format = "text";
    private String pattern = DEFAULT_PATTERN;
    private Encoder<ILoggingEvent> delegate;

    public void setFormat(String format) {
        this.format = format == null ? "text" : format.trim().toLowerCase(Locale.ROOT);
    }

    public String getFormat() {
        return format;
    }

    public void setPattern(String pattern) {
        this.pattern = pattern;
    }

    @Override
    public void start() {
        if (!format.equals("json") && !format.equals("text")) {
            // Logback prints this status at start-up; text output keeps the logs flowing meanwhile.
            addError("unknown log format '" + format + "' (SLUICE_LOG_FORMAT): expected text or json; using text");
            format = "text";
        }
        switch (format) {
            case "json" -> {
                JsonEncoder json = new JsonEncoder();
                json.setContext(getContext());
                json.start();
                delegate = json;
            }
            default -> {
                PatternLayoutEncoder text = new PatternLayoutEncoder();
                text.setContext(getContext());
                text.setPattern(pattern);
                text.setCharset(StandardCharsets.UTF_8);
                text.start();
                delegate = text;
            }
        }
        super.start();
    }

    @Override
    public void stop() {
        if (delegate != null) {
            delegate.stop();
        }
        super.stop();
    }

    @Override
    public byte[] headerBytes() {
        return redact(delegate == null ? null : delegate.headerBytes());
    }

    @Override
    public byte[] encode(ILoggingEvent event) {
        return redact(delegate.encode(event));
    }

    @Override
    public byte[] footerBytes() {
        return redact(delegate == null ? null : delegate.footerBytes());
    }

    private static byte[] redact(byte[] bytes) {
        if (bytes == null || bytes.length == 0) {
            return bytes;
        }
        String text = new String(bytes, StandardCharsets.UTF_8);
        String clean = SecretRedaction.redact(text);
        return clean == text || clean.equals(text) ? bytes : clean.getBytes(StandardCharsets.UTF_8);
    }
}
