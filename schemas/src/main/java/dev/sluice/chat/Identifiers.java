package dev.sluice.chat;

import java.util.Locale;

/**
 * The rules for the ids a record names, defined once for everything that checks them: the topology's
 * {@code NotificationValidator} (dead letter and FAILED result), its chat-status readers (a chat event that breaks them
 * is logged and skipped), {@code sluice produce} and {@code sluice chat-event} (refused before anything is written).
 * <ul>
 *   <li>a bot id is {@value #BOT_ID_PATTERN}: a logical name, as the senders' {@code bot.<id>.token} keys and budget keys
 *       spell it (the sender's {@code BudgetKeys.BOT_ID} is the same pattern: {@code IdRulesToolsTest} checks); a
 *       bot id no sender can have a token for is never sent;</li>
 *   <li>a chat id has no control character (nor U+2028 / U+2029): the chat-status store joins chat and bot with
 *       U+001F, and ids are printed one per line.</li>
 * </ul>
 * Pure and stateless.
 */
public final class Identifiers {
    /** A bot id, as the senders' config keys allow it. */
    public static final String BOT_ID_PATTERN = "[A-Za-z0-9_.:-]{1,64}";
    /** How {@link #botIdProblem} describes {@link #BOT_ID_PATTERN}. */
    public static final String BOT_ID_RULE = "1 to 64 of A-Z a-z 0-9 _ . : - (" + BOT_ID_PATTERN + ", as in bot.<id>.token)";

    private Identifiers() {
    }

    /** Whether {@code botId} matches {@link #BOT_ID_PATTERN} (a loop, no regex per record). */
    public static boolean isBotId(String botId) {
        if (botId == null || botId.isEmpty() || botId.length() > 64) {
            return false;
        }
        for (int i = 0; i < botId.length(); i++) {
            char c = botId.charAt(i);
            boolean ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                    || c == '_' || c == '.' || c == ':' || c == '-';
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code s} has an ISO control character, U+2028 or U+2029 (a loop: no stream per record). */
    public static boolean hasControlCharacter(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
                return true;
            }
        }
        return false;
    }

    /**
     * {@code text} for a one-line message: a control character (and a backslash, so the escape is unambiguous) written
     * as an escape, backslash-n, -r, -t, two backslashes, else backslash-u and four hex digits (as JSON does), so a
     * value cannot forge a second line or rewrite the terminal. Format characters (Unicode category Cf: the bidi
     * overrides and isolates U+202A-U+202E and U+2066-U+2069, the zero-width space and joiners, U+FEFF, the soft hyphen)
     * are written as backslash-u too, in any plane (the invisible tag characters U+E0000-U+E007F as their surrogate pair),
     * and so are the Hangul fillers: printed raw, an id could read as another id or reorder the rest of the line.
     */
    public static String escape(String text) {
        return escape(text, true);
    }

    /**
     * {@code text} with only its invisible characters ({@link #escape}'s controls, separators, format characters and
     * fillers) written as backslash-u; backslashes are kept. For a whole message line that mixes values already
     * escaped with text that is not (a parser's error quoting the input): the line cannot reach the terminal raw.
     */
    public static String escapeInvisible(String text) {
        return escape(text, false);
    }

    /** One pass by code point; {@code named}: backslash-n, -r, -t and two backslashes as {@link #escape} writes them. */
    private static String escape(String text, boolean named) {
        if (text == null) {
            return null;
        }
        StringBuilder sb = null;
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            int n = Character.charCount(cp);
            String rep = !named ? null : switch (cp) {
                case '\n' -> "\\n";
                case '\r' -> "\\r";
                case '\t' -> "\\t";
                case '\\' -> "\\\\";
                default -> null;
            };
            if (rep == null && invisible(cp)) {
                rep = unicodeEscape(text, i, n);
            }
            if (rep != null && sb == null) {
                sb = new StringBuilder(text.length() + 8).append(text, 0, i);
            }
            if (sb != null) {
                if (rep != null) {
                    sb.append(rep);
                } else {
                    sb.append(text, i, i + n);
                }
            }
            i += n;
        }
        return sb == null ? text : sb.toString();
    }

    /**
     * A control character, a line or paragraph separator, a format character (Cf, in any plane: the tag characters
     * U+E0000-U+E007F too) or a Hangul filler (U+115F, U+1160, U+3164, U+FFA0: letters that print as nothing).
     */
    private static boolean invisible(int cp) {
        return Character.isISOControl(cp) || cp == 0x2028 || cp == 0x2029 || Character.getType(cp) == Character.FORMAT
                || cp == 0x115F || cp == 0x1160 || cp == 0x3164 || cp == 0xFFA0;
    }

    /** Backslash-u and four hex digits per UTF-16 unit (a surrogate pair above U+FFFF), as JSON does. */
    private static String unicodeEscape(String text, int at, int units) {
        StringBuilder b = new StringBuilder(6 * units);
        for (int k = at; k < at + units; k++) {
            b.append(String.format(Locale.ROOT, "\\u%04X", (int) text.charAt(k)));
        }
        return b.toString();
    }
}
