package dev.sluice.app.tools;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.topology.InvalidNotificationException;
import dev.sluice.topology.NotificationValidator;
import dev.sluice.topology.TopologyConfig;
import dev.sluice.config.Settings;
import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Reads one JSON object per line into a {@link Notification}.
 *
 * <p>Field names are those of {@code Notification.avsc} ({@code id, bot_id, chat_id, kind, event_class,
 * user_id, entity, text, parse_mode, created_at, expires_at, not_before, bot_pool, attributes}, and issue 20's
 * {@code reply_markup, disable_notification, protect_content, link_preview_disabled, message_thread_id, media, edit_of,
 * edit_part, delete_of}: {@link RichFieldsJson}; {@code text} may be left out of a delete, a markup edit or media). Times are
 * ISO-8601 instants ({@code 2025-07-30T00:00:00Z}) or epoch milliseconds (a JSON number).
 * {@code created_at} may be left out (then: the clock's now). Unknown fields are refused, so a typo such as
 * {@code chatId} is reported instead of silently dropped, and so is a key twice in one object (anywhere in the line:
 * which of the values was meant is unknown). After parsing, the topology's own {@link NotificationValidator} rules
 * apply (required text fields, text at most 4096 characters, {@code not_before} within {@code schedule.max.horizon.ms}
 * of the parser's clock), so a line accepted here is not dead-lettered later for the same reason. One rule is produce's
 * own: {@code expires_at} must be after {@code not_before} (the topology would hold such a notification and end it
 * EXPIRED unsent).
 */
public final class NotificationJson {
    static final Set<String> FIELDS = Stream.concat(Stream.of("id", "bot_id", "chat_id", "kind", "event_class",
            "user_id", "entity", "text", "parse_mode", "created_at", "expires_at", "not_before", "bot_pool", "attributes"),
            RichFieldsJson.FIELDS.stream()).collect(Collectors.toUnmodifiableSet());
    static final List<String> REQUIRED = List.of("id", "bot_id", "chat_id", "kind", "text");
    private static final int MAX_VALUE_ECHO = 80;

    private final ObjectMapper json = JsonMapper.builder().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();
    private final Clock clock;
    private final long scheduleMaxHorizonMs;

    /** With the default {@code schedule.max.horizon.ms} (400 days). */
    public NotificationJson(Clock clock) {
        this(clock, TopologyConfig.scheduleMaxHorizonMs(Settings.empty()));
    }

    /** @param scheduleMaxHorizonMs the topology's {@code schedule.max.horizon.ms} ({@link TopologyConfig#scheduleMaxHorizonMs}) */
    public NotificationJson(Clock clock, long scheduleMaxHorizonMs) {
        this.clock = clock;
        this.scheduleMaxHorizonMs = scheduleMaxHorizonMs;
    }

    /**
     * @param lineNumber 1-based, for the error message
     * @throws InvalidLineException naming the line, the field and the value when the line is not a valid notification
     */
    public Notification parse(long lineNumber, String line) {
        JsonNode node;
        try {
            node = json.readTree(line);
        } catch (JsonParseException e) {
            String duplicate = duplicateField(e);
            if (duplicate != null) {
                throw new InvalidLineException(lineNumber, duplicate, "appears twice in one object; give it once"
                        + " (which value was meant is unknown, and JSON readers differ on which one wins)");
            }
            throw new InvalidLineException(lineNumber, "(line)", "not JSON: " + jsonProblem(line, e));
        } catch (JsonProcessingException e) {
            throw new InvalidLineException(lineNumber, "(line)", "not JSON: " + jsonProblem(line, e));
        }
        if (node == null || !node.isObject()) {
            throw new InvalidLineException(lineNumber, "(line)", "expected a JSON object, got " + (node == null ? "nothing" : node.getNodeType()));
        }
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (!FIELDS.contains(name)) {
                throw new InvalidLineException(lineNumber, name, "unknown field (known: "
                        + FIELDS.stream().sorted().collect(Collectors.joining(", ")) + ")");
            }
        }
        for (String required : REQUIRED) {
            JsonNode v = node.get(required);
            if (required.equals("text") && (v == null || v.isNull()) && RichFieldsJson.textOptional(node)) {
                continue; // a delete, a markup edit or a media message without caption
            }
            if (v == null || v.isNull()) {
                throw new InvalidLineException(lineNumber, required, (v == null ? "missing" : "null")
                        + "; required fields are " + String.join(", ", REQUIRED));
            }
        }
        Notification.Builder builder = Notification.newBuilder()
                .setId(text(lineNumber, node, "id"))
                .setBotId(text(lineNumber, node, "bot_id"))
                .setChatId(text(lineNumber, node, "chat_id"))
                .setKind(text(lineNumber, node, "kind"))
                .setUserId(text(lineNumber, node, "user_id"))
                .setEntity(text(lineNumber, node, "entity"))
                .setText(node.hasNonNull("text") ? text(lineNumber, node, "text") : "")
                .setParseMode(parseMode(lineNumber, node))
                .setEventClass(eventClass(lineNumber, node))
                .setCreatedAt(orNow(time(lineNumber, node, "created_at")))
                .setExpiresAt(time(lineNumber, node, "expires_at"))
                .setNotBefore(time(lineNumber, node, "not_before"))
                .setBotPool(strings(lineNumber, node, "bot_pool"))
                .setAttributes(attributes(lineNumber, node));
        RichFieldsJson.apply(lineNumber, node, builder);
        Notification n = builder.build();
        try {
            NotificationValidator.validate(n);
            NotificationValidator.validateNotBefore(n, clock.millis(), scheduleMaxHorizonMs);
        } catch (InvalidNotificationException e) {
            throw new InvalidLineException(lineNumber, e.field(), e.getMessage());
        }
        if (n.getNotBefore() != null && n.getExpiresAt() != null && !n.getExpiresAt().isAfter(n.getNotBefore())) {
            throw new InvalidLineException(lineNumber, "expires_at", n.getExpiresAt() + " is not after not_before "
                    + n.getNotBefore() + ": the topology would hold the notification until expires_at and end it EXPIRED"
                    + " without sending it");
        }
        return n;
    }

    /**
     * The path of the key a line has twice ({@code text}, {@code attributes.a}, {@code reply_markup.inline_keyboard[0][1].text}),
     * or null when {@code e} is another problem. Jackson's {@link StreamReadFeature#STRICT_DUPLICATE_DETECTION} has no
     * exception type of its own: it is told by its message, the path read from the parser's context.
     */
    static String duplicateField(JsonParseException e) {
        String message = e.getOriginalMessage();
        if (message == null || !message.startsWith("Duplicate field '")) {
            return null;
        }
        JsonParser p = e.getProcessor();
        if (p == null || p.getParsingContext() == null) {
            return message.substring("Duplicate field '".length(), Math.max("Duplicate field '".length(), message.length() - 1));
        }
        StringBuilder path = new StringBuilder();
        for (JsonStreamContext c = p.getParsingContext(); c != null && !c.inRoot(); c = c.getParent()) {
            String step = c.inArray() ? "[" + c.getCurrentIndex() + "]" : c.getCurrentName();
            path.insert(0, c.inObject() && c.getParent() != null && !c.getParent().inRoot() ? "." + step : step);
        }
        String s = path.toString();
        return s.startsWith(".") ? s.substring(1) : s;
    }

    /** Where and what, in the line's own terms: no parser class names, token lists or source descriptions. */
    static String jsonProblem(String line, JsonProcessingException e) {
        int column = e.getLocation() == null ? -1 : e.getLocation().getColumnNr(); // 1-based
        if (e instanceof com.fasterxml.jackson.core.io.JsonEOFException || column > line.strip().length()) {
            return "the line ends before the JSON object is complete";
        }
        if (column < 1) {
            return "cannot be read as JSON";
        }
        int end = column - 1;
        while (end < line.length() && end - (column - 1) < 20 && !Character.isWhitespace(line.charAt(end))
                && (end == column - 1 || ",:{}[]\"".indexOf(line.charAt(end)) < 0)) {
            end++;
        }
        return "unexpected '" + line.substring(column - 1, end) + "' at column " + column;
    }

    private Instant orNow(Instant t) {
        return t != null ? t : clock.instant();
    }

    private static String text(long line, JsonNode node, String field) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (v.isTextual()) {
            return v.asText();
        }
        if (v.isIntegralNumber() && ("chat_id".equals(field) || "user_id".equals(field))) {
            return v.asText(); // chat ids are numbers in Telegram's own JSON; accept them as such
        }
        throw new InvalidLineException(line, field, "expected a string, got " + echo(v));
    }

    private static String parseMode(long line, JsonNode node) {
        String v = text(line, node, "parse_mode");
        if (v != null && !List.of("MarkdownV2", "HTML", "Markdown").contains(v)) {
            throw new InvalidLineException(line, "parse_mode", "'" + cut(v) + "' is not one of MarkdownV2, HTML, Markdown");
        }
        return v;
    }

    private static NotificationClass eventClass(long line, JsonNode node) {
        String v = text(line, node, "event_class");
        if (v == null) {
            return null;
        }
        try {
            return NotificationClass.valueOf(v);
        } catch (IllegalArgumentException e) {
            throw new InvalidLineException(line, "event_class", "'" + cut(v) + "' is not one of "
                    + Arrays.toString(NotificationClass.values()));
        }
    }

    /** ISO-8601 instant text or epoch milliseconds; null when absent. */
    static Instant time(long line, JsonNode node, String field) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (v.isIntegralNumber() && v.canConvertToLong() && v.asLong() >= 0) {
            return Instant.ofEpochMilli(v.asLong());
        }
        if (v.isTextual()) {
            try {
                return Instant.parse(v.asText());
            } catch (DateTimeParseException e) {
                // fall through to the error below
            }
        }
        throw new InvalidLineException(line, field, echo(v) + " is not an ISO-8601 instant (2025-07-30T00:00:00Z) "
                + "or epoch milliseconds (a non-negative integer)");
    }

    private static List<String> strings(long line, JsonNode node, String field) {
        JsonNode v = node.get(field);
        List<String> out = new ArrayList<>();
        if (v == null || v.isNull()) {
            return out;
        }
        if (!v.isArray()) {
            throw new InvalidLineException(line, field, "expected an array of strings, got " + echo(v));
        }
        for (JsonNode item : v) {
            if (!item.isTextual()) {
                throw new InvalidLineException(line, field, "expected an array of strings, found element " + echo(item));
            }
            out.add(item.asText());
        }
        return out;
    }

    private static Map<String, String> attributes(long line, JsonNode node) {
        JsonNode v = node.get("attributes");
        Map<String, String> out = new LinkedHashMap<>();
        if (v == null || v.isNull()) {
            return out;
        }
        if (!v.isObject()) {
            throw new InvalidLineException(line, "attributes", "expected an object of string values, got " + echo(v));
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode value = e.getValue();
            if (value.isTextual()) {
                out.put(e.getKey(), value.asText());
            } else if (value.isNumber() || value.isBoolean()) {
                out.put(e.getKey(), value.asText()); // Avro map<string>: numbers become their text
            } else {
                throw new InvalidLineException(line, "attributes." + e.getKey(), "expected a string, got " + echo(value));
            }
        }
        return out;
    }

    private static String echo(JsonNode v) {
        return v.isTextual() ? "'" + cut(v.asText()) + "'" : v.getNodeType().name().toLowerCase() + " " + cut(v.toString());
    }

    private static String cut(String s) {
        return s.length() <= MAX_VALUE_ECHO ? s : s.substring(0, MAX_VALUE_ECHO) + "...";
    }
}
