package dev.sluice.config;

import java.util.regex.Pattern;

/**
 * Removes Telegram bot tokens from text before it reaches logs, exceptions or metrics.
 *
 * <p>A Telegram token is the bot's numeric id, a colon and a secret of 35 URL-safe characters
 * (Telegram Bot API, "Authorizing your bot": {@code 123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11}); this
 * matches 6..12 digits, a colon and 30 or more of {@code [A-Za-z0-9_-]}. Any path segment after
 * {@code /bot} in a URL ({@code https://api.telegram.org/bot<token>/sendMessage}) is removed as well,
 * whatever its shape, because that is where clients put the token.
 */
public final class TokenRedaction {
    /** What a token is replaced with. */
    public static final String REDACTED = "[redacted]";

    private static final Pattern TOKEN = Pattern.compile("\\d{6,12}:[A-Za-z0-9_-]{30,}");
    private static final Pattern URL_TOKEN = Pattern.compile("/bot[^/\\s\"'?#]+/");

    private TokenRedaction() {
    }

    /** {@code text} with every token replaced by {@link #REDACTED}; null stays null. */
    public static String redact(String text) {
        if (text == null || text.isEmpty()) {
            return text;
        }
        String out = text;
        if (out.indexOf(':') >= 0) {
            out = TOKEN.matcher(out).replaceAll(REDACTED);
        }
        if (out.contains("/bot")) {
            out = URL_TOKEN.matcher(out).replaceAll("/bot" + REDACTED + "/");
        }
        return out;
    }

    /** Whether {@code text} contains something {@link #redact} would remove. */
    public static boolean containsToken(String text) {
        return text != null && !redact(text).equals(text);
    }
}
