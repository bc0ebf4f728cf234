package dev.sluice.sender.budget;

/**
 * What a Lua script does, as text: the script without its comments ({@code --} to the end of the line, and
 * {@code --[[ ]]} / {@code --[==[ ]==]} blocks), indentation, trailing whitespace and blank lines, and with each other run
 * of spaces and tabs as one space. String literals ({@code '...'}, {@code "..."} with their escapes, {@code [[ ]]} /
 * {@code [==[ ]==]}) are kept exactly: a {@code --} inside one is not a comment. Line breaks between code lines are kept
 * (Lua 5.1 reads {@code f\n(g)} otherwise than {@code f (g)}); a block comment spanning lines counts as one.
 *
 * <p>So two scripts that differ only in comments or layout read the same here ({@link SharedLimits} publishes the hash of
 * this, not of the file). Stateless.
 */
final class LuaCode {
    private LuaCode() {
    }

    /** {@code source}'s code, as above. */
    static String of(String source) {
        StringBuilder out = new StringBuilder(source.length());
        boolean space = false; // whitespace or a one-line comment since the last token of this line
        int n = source.length();
        int i = 0;
        while (i < n) {
            char c = source.charAt(i);
            if (c == '\n') {
                endLine(out);
                space = false;
                i++;
            } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\u000B') {
                space = true;
                i++;
            } else if (c == '-' && i + 1 < n && source.charAt(i + 1) == '-') {
                int level = longBracketLevel(source, i + 2);
                int end = level < 0 ? lineEnd(source, i) : longBracketEnd(source, i + 2, level);
                if (source.substring(i, end).indexOf('\n') >= 0) {
                    endLine(out);
                    space = false;
                } else {
                    space = true;
                }
                i = end;
            } else {
                if (space && !atLineStart(out)) {
                    out.append(' ');
                }
                space = false;
                int end = i + 1;
                if (c == '\'' || c == '"') {
                    end = shortStringEnd(source, i);
                } else if (c == '[') {
                    int level = longBracketLevel(source, i);
                    end = level < 0 ? i + 1 : longBracketEnd(source, i, level);
                }
                out.append(source, i, end);
                i = end;
            }
        }
        if (atLineStart(out) && out.length() > 0) {
            out.setLength(out.length() - 1);
        }
        return out.toString();
    }

    private static boolean atLineStart(StringBuilder out) {
        return out.length() == 0 || out.charAt(out.length() - 1) == '\n';
    }

    /** Ends the output line, unless nothing is on it (a blank line, or only comments). */
    private static void endLine(StringBuilder out) {
        if (!atLineStart(out)) {
            out.append('\n');
        }
    }

    /** The index of the line break ending the line at {@code from} (the break itself stays), or the end. */
    private static int lineEnd(String s, int from) {
        int nl = s.indexOf('\n', from);
        return nl < 0 ? s.length() : nl;
    }

    /** The level of a long bracket opening at {@code at} ({@code [[} = 0, {@code [==[} = 2), or -1 if none opens there. */
    private static int longBracketLevel(String s, int at) {
        if (at >= s.length() || s.charAt(at) != '[') {
            return -1;
        }
        int j = at + 1;
        while (j < s.length() && s.charAt(j) == '=') {
            j++;
        }
        return j < s.length() && s.charAt(j) == '[' ? j - at - 1 : -1;
    }

    /** The index after the long bracket of {@code level} opened at {@code at} closes, or the end (unclosed). */
    private static int longBracketEnd(String s, int at, int level) {
        String close = "]" + "=".repeat(level) + "]";
        int found = s.indexOf(close, at + level + 2);
        return found < 0 ? s.length() : found + close.length();
    }

    /** The index after the quoted string opened at {@code at} closes; at an unescaped line break or the end if unclosed. */
    private static int shortStringEnd(String s, int at) {
        char quote = s.charAt(at);
        int j = at + 1;
        while (j < s.length()) {
            char c = s.charAt(j);
            if (c == '\\') {
                j += 2;
            } else if (c == quote) {
                return j + 1;
            } else if (c == '\n') {
                return j;
            } else {
                j++;
            }
        }
        return s.length();
    }
}
