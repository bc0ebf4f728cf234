package dev.sluice.sender.http;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A text with placeholders {@code {chat}} (the recipient: chat id, phone number, channel), {@code {text}}
 * (the message) and {@code {token}} (the bot's {@code bot.<id>.token}, the provider's API key), parsed once.
 * Each value is escaped for where it lands ({@link Encoding}): percent-encoded in a URL or a form body,
 * JSON-string-escaped by Jackson in a JSON body (so the template writes the quotes: {@code "to":"{chat}"}),
 * as is in headers and plain bodies. Any other {@code {name}} of lower-case letters is a configuration error,
 * so a typo such as {@code {chat_id}} fails at start instead of being sent literally.
 */
public final class Template {
    /** Placeholder names a template may use. */
    public static final Set<String> NAMES = Set.of("chat", "text", "token");
    private static final Pattern PLACEHOLDER = Pattern.compile("\\{([a-z_]+)}");

    /** How values are escaped where they land. */
    public enum Encoding {
        /** Percent-encoding (UTF-8, spaces as {@code %20}): URL templates. */
        URL,
        /** {@code application/x-www-form-urlencoded} (spaces as {@code +}). */
        FORM,
        /** JSON string content (quotes, backslashes, control characters escaped), without the quotes. */
        JSON,
        /** Verbatim: headers and plain-text bodies. Header values reject CR/LF. */
        NONE
    }

    private final String source;
    private final List<String> literals;
    private final List<String> names;
    private final Encoding encoding;

    private Template(String source, List<String> literals, List<String> names, Encoding encoding) {
        this.source = source;
        this.literals = literals;
        this.names = names;
        this.encoding = encoding;
    }

    /**
     * @throws IllegalArgumentException naming the unknown placeholder
     */
    public static Template parse(String source, Encoding encoding) {
        List<String> literals = new ArrayList<>();
        List<String> names = new ArrayList<>();
        Matcher m = PLACEHOLDER.matcher(source);
        int at = 0;
        while (m.find()) {
            if (!NAMES.contains(m.group(1))) {
                throw new IllegalArgumentException("unknown placeholder {" + m.group(1) + "}: expected one of "
                        + "{chat}, {text}, {token}");
            }
            literals.add(source.substring(at, m.start()));
            names.add(m.group(1));
            at = m.end();
        }
        literals.add(source.substring(at));
        return new Template(source, List.copyOf(literals), List.copyOf(names), encoding);
    }

    /** Whether the template uses {@code name}. */
    public boolean uses(String name) {
        return names.contains(name);
    }

    /**
     * @param values placeholder name → raw value; a missing value is the empty string
     */
    public String fill(Map<String, String> values) {
        StringBuilder out = new StringBuilder(source.length() + 64);
        for (int i = 0; i < names.size(); i++) {
            out.append(literals.get(i)).append(encode(values.getOrDefault(names.get(i), "")));
        }
        return out.append(literals.get(names.size())).toString();
    }

    private String encode(String raw) {
        return switch (encoding) {
            case URL -> URLEncoder.encode(raw, StandardCharsets.UTF_8).replace("+", "%20");
            case FORM -> URLEncoder.encode(raw, StandardCharsets.UTF_8);
            case JSON -> new String(JsonStringEncoder.getInstance().quoteAsString(raw));
            case NONE -> raw;
        };
    }

    public Encoding encoding() {
        return encoding;
    }

    /** The template as configured (it holds placeholders, never a filled secret). */
    @Override
    public String toString() {
        return source;
    }
}
