package dev.sluice.config;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The one place that removes bot tokens from text before it reaches logs, stderr, exceptions, metrics or topics
 * (the sender's provider answers and exception texts, the app's log encoder and CLI output through
 * {@link SecretRedaction}). Stateless; any thread.
 *
 * <p>What it removes:
 * <ul>
 *   <li>by shape ({@link #redact(String)}): a Telegram token, the bot's numeric id, a colon and a secret of URL-safe
 *       characters (Telegram Bot API, "Authorizing your bot": {@code 123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11}),
 *       matched loosely: 3 or more digits, the colon, 10 or more of {@code [A-Za-z0-9_-]} with at least one that is
 *       not a digit (so a {@code chat:message} pair of numbers stays readable). The colon may be percent-encoded
 *       ({@code %3A}, {@code %3a}, twice-encoded {@code %253A}), as it is when a token is filled into a URL or a
 *       form body;</li>
 *   <li>by place: any path segment after {@code /bot} that ends in {@code /}
 *       ({@code https://api.telegram.org/bot<token>/sendMessage}, {@code /file/bot<token>/...}), whatever its shape,
 *       because that is where clients put the token (a test token need not look like Telegram's); and a
 *       {@code /bot} segment holding a colon wherever it ends (a URL cut off after the token);</li>
 *   <li>by value ({@link #redact(String, String)}): one known secret (a bot token or an HTTP provider's API key, of
 *       any shape), as it is and in the forms it takes when filled into a request: percent-encoded (with {@code +}
 *       or {@code %20} for a space) and JSON-escaped.</li>
 * </ul>
 * Redacted text is stable: redacting it again changes nothing.
 */
public final class TokenRedaction {
    /** What a token is replaced with. */
    public static final String REDACTED = "[redacted]";

    /** A colon, or its percent-encoded forms (once or twice encoded). */
    private static final String COLON = "(?::|%3[Aa]|%253[Aa])";
    private static final Pattern TOKEN = Pattern.compile(
            "\\d{3,}" + COLON + "(?=[A-Za-z0-9_-]*[A-Za-z_-])[A-Za-z0-9_-]{10,}");
    /** {@code /bot<segment>/}: the segment is a token wherever it is not a query, fragment or quoted text. */
    private static final Pattern URL_TOKEN = Pattern.compile("/bot[^/\\s\"'?#]+/");
    /** {@code /bot<segment with a colon>} however it ends (end of text, query, quote, white space). */
    private static final Pattern URL_TOKEN_UNTERMINATED = Pattern.compile("/bot[^/\\s\"'?#]*" + COLON + "[^/\\s\"'?#]*");

    private TokenRedaction() {
    }

    /** {@code text} with every token-shaped string and every {@code /bot<token>} URL segment replaced; null stays null. */
    public static String redact(String text) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        String out = text;
        if (out.indexOf(':') >= 0 || out.indexOf('%') >= 0) {
            out = TOKEN.matcher(out).replaceAll(REDACTED);
        }
        if (out.contains("/bot")) {
            out = URL_TOKEN.matcher(out).replaceAll("/bot" + REDACTED + "/");
            out = URL_TOKEN_UNTERMINATED.matcher(out).replaceAll("/bot" + REDACTED);
        }
        return out;
    }

    /**
     * {@code text} with {@code secret} (plain, percent-encoded or JSON-escaped) replaced, then {@link #redact(String)}
     * applied; a null or empty secret only does the latter. Null text stays null.
     */
    public static String redact(String text, String secret) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        String out = text;
        if (secret != null && !secret.isEmpty()) {
            // longest first, so that no form is half-replaced by a shorter one it contains
            List<String> forms = Stream.concat(formsOf(secret), secretPart(secret).stream().flatMap(TokenRedaction::formsOf))
                    .distinct().sorted(Comparator.comparingInt(String::length).reversed()).toList();
            for (String f : forms) {
                out = out.replace(f, REDACTED);
            }
        }
        return redact(out);
    }

    /** The secret as it is and as it is filled into a request: percent-encoded (+ or %20) and JSON-escaped. */
    private static Stream<String> formsOf(String secret) {
        String form = URLEncoder.encode(secret, StandardCharsets.UTF_8);
        return Stream.of(secret, form, form.replace("+", "%20"), jsonEscaped(secret));
    }

    /**
     * The secret half of a Telegram token ({@code <bot id>:<secret>}), which a provider or proxy may echo without the
     * id (found from outside: a 400's description held it, and it reached a result's reason); only when it is long
     * enough ({@value #MIN_SECRET_PART} characters) not to match ordinary words.
     */
    private static java.util.Optional<String> secretPart(String secret) {
        int colon = secret.indexOf(':');
        if (colon <= 0 || secret.length() - colon - 1 < MIN_SECRET_PART) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(secret.substring(colon + 1));
    }

    /** The shortest secret half of a token redacted on its own (Telegram's are 35 characters). */
    static final int MIN_SECRET_PART = 10;

    /** Whether {@code text} contains something {@link #redact(String)} would remove. */
    public static boolean containsToken(String text) {
        return text != null && !redact(text).equals(text);
    }

    /** {@code s} as it stands inside a JSON string (quote, backslash and control characters escaped). */
    static String jsonEscaped(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 8);
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.toString();
    }
}
