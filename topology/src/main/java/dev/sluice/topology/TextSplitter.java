package dev.sluice.topology;

import java.util.ArrayList;
import java.util.List;

/**
 * Cuts a text that is too long for one Telegram message into ordered parts ({@code text.too.long=split}). Pure and
 * stateless (no thread owns state).
 *
 * <p>Each part is at most its limit in characters (UTF-16 code units, as {@link NotificationValidator} counts): the
 * first part {@code firstMax} (1,024 when the message carries media: part 1 is the media and its caption), every
 * other part {@code restMax} (4,096, sendMessage). Where a part ends, looking back from its limit:
 * <ol>
 *   <li>the last paragraph break (a blank line) in the second half of the window, else</li>
 *   <li>the last line break there, else</li>
 *   <li>the last whitespace there (a word boundary), else</li>
 *   <li>the last paragraph break, line break or whitespace anywhere in the window, else</li>
 *   <li>a hard cut at the limit, moved back by one when it would fall inside a surrogate pair.</li>
 * </ol>
 * The whitespace at a cut (the break itself) is dropped: a part neither ends nor starts with it, and no part is
 * blank. Nothing else is dropped or changed. A hard cut may separate a combining mark or a joined emoji sequence
 * from its base, and a cut can fall inside markup of a parse mode (the part then fails as Telegram's "can't parse
 * entities"): a producer that splits its own text at safe places avoids both.
 */
public final class TextSplitter {
    private TextSplitter() {
    }

    /**
     * @param text     the whole text (not null)
     * @param firstMax characters the first part may have (at least 2)
     * @param restMax  characters every other part may have (at least 2)
     * @param maxParts the most parts wanted
     * @return the parts in order (one part, {@code text} itself, when it fits in {@code firstMax}); or an empty list
     *         when more than {@code maxParts} parts would be needed (it stops counting there)
     */
    public static List<String> split(String text, int firstMax, int restMax, int maxParts) {
        if (firstMax < 2 || restMax < 2) {
            throw new IllegalArgumentException("part limits must be at least 2 characters: " + firstMax + ", " + restMax);
        }
        if (text.length() <= firstMax) {
            return List.of(text);
        }
        List<String> parts = new ArrayList<>();
        int start = skipWhitespace(text, 0);
        while (start < text.length()) {
            if (parts.size() == maxParts) {
                return List.of();
            }
            int max = parts.isEmpty() ? firstMax : restMax;
            if (text.length() - start <= max) {
                parts.add(trimEnd(text, start, text.length()));
                break;
            }
            int cut = cut(text, start, start + max);
            parts.add(trimEnd(text, start, cut));
            start = skipWhitespace(text, cut);
        }
        if (parts.isEmpty()) {
            return List.of(""); // only whitespace: nothing to send but an empty caption
        }
        return parts;
    }

    /**
     * Where the part starting at {@code start} (a non-whitespace character) ends when it may reach {@code limit}
     * (exclusive; {@code limit < text.length()}): a boundary as in the class doc, always in {@code (start, limit]}. A
     * break at {@code limit} itself counts: the part then ends exactly at its limit.
     */
    static int cut(String text, int start, int limit) {
        int half = start + (limit - start) / 2;
        int to = limit + 1; // the character at limit may be the break
        int at = lastParagraphBreak(text, half, to);
        if (at < 0) {
            at = lastIndexOf(text, '\n', half, to);
        }
        if (at < 0) {
            at = lastWhitespace(text, half, to);
        }
        if (at < 0) {
            at = lastParagraphBreak(text, start + 1, to);
        }
        if (at < 0) {
            at = lastIndexOf(text, '\n', start + 1, to);
        }
        if (at < 0) {
            at = lastWhitespace(text, start + 1, to);
        }
        if (at > start && !trimEnd(text, start, at).isEmpty()) {
            return at;
        }
        // no boundary: a hard cut, never between the two halves of a surrogate pair
        int hard = limit;
        if (Character.isHighSurrogate(text.charAt(hard - 1)) && Character.isLowSurrogate(text.charAt(hard))) {
            hard--;
        }
        return hard;
    }

    /** The index of the first newline of the last blank line ({@code \n} followed by optional spaces and {@code \n}) in [from, to). */
    private static int lastParagraphBreak(String text, int from, int to) {
        for (int i = Math.min(to, text.length()) - 1; i >= from; i--) {
            if (text.charAt(i) == '\n') {
                int j = i - 1;
                while (j >= from && (text.charAt(j) == ' ' || text.charAt(j) == '\t' || text.charAt(j) == '\r')) {
                    j--;
                }
                if (j >= from && text.charAt(j) == '\n') {
                    return j;
                }
            }
        }
        return -1;
    }

    private static int lastIndexOf(String text, char c, int from, int to) {
        for (int i = to - 1; i >= from; i--) {
            if (text.charAt(i) == c) {
                return i;
            }
        }
        return -1;
    }

    private static int lastWhitespace(String text, int from, int to) {
        for (int i = to - 1; i >= from; i--) {
            if (Character.isWhitespace(text.charAt(i))) {
                return i;
            }
        }
        return -1;
    }

    private static int skipWhitespace(String text, int i) {
        while (i < text.length() && Character.isWhitespace(text.charAt(i))) {
            i++;
        }
        return i;
    }

    private static String trimEnd(String text, int start, int end) {
        int e = end;
        while (e > start && Character.isWhitespace(text.charAt(e - 1))) {
            e--;
        }
        return text.substring(start, e);
    }
}
