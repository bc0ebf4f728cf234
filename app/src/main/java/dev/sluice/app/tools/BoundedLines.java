package dev.sluice.app.tools;

import java.io.IOException;
import java.io.Reader;

/**
 * The lines of a text, each read into memory only up to a bound in UTF-8 bytes: a longer line is skipped to its end
 * (counted, never held) and reported as {@link Line#tooLong()}, so a huge line costs no memory and gets an error that
 * names the bound instead of a parser's. Line ends as {@link java.io.BufferedReader#readLine()} sees them ({@code \n},
 * {@code \r\n} or {@code \r}). One thread reads; closing closes the reader.
 */
final class BoundedLines implements AutoCloseable {
    /**
     * What {@code sluice produce} reads of one line: 1 MiB, a producer's default {@code max.request.size}. A valid
     * notification is far smaller (its fields are bounded: about 32 KiB, or about 240 KiB of text with
     * {@code text.too.long=split}; escaped in JSON at most some 500 KiB), so a longer line can never be one.
     */
    static final int MAX_LINE_BYTES = 1 << 20;

    /** One line: its 1-based number, its text (null when too long) and its length in UTF-8 bytes (so far, when too long). */
    record Line(long number, String text, long bytes) {
        boolean tooLong() {
            return text == null;
        }
    }

    private final Reader in;
    private final int maxBytes;
    private final char[] buf = new char[8192];
    private int pos;
    private int end;
    private long number;
    private boolean skipLf;

    BoundedLines(Reader in, int maxBytes) {
        this.in = in;
        this.maxBytes = maxBytes;
    }

    /** The next line, or null at the end of the text. */
    Line next() throws IOException {
        StringBuilder sb = new StringBuilder();
        long bytes = 0;
        boolean any = false;
        while (true) {
            if (pos == end) {
                end = in.read(buf, 0, buf.length);
                pos = 0;
                if (end <= 0) {
                    end = 0;
                    return any ? line(sb, bytes) : null;
                }
            }
            char c = buf[pos++];
            if (skipLf) {
                skipLf = false;
                if (c == '\n') {
                    continue;
                }
            }
            if (c == '\n' || c == '\r') {
                skipLf = c == '\r';
                return line(sb, bytes);
            }
            any = true;
            // UTF-8: 1 byte below U+0080, 2 below U+0800, 4 for a surrogate pair (2 + 2), else 3
            bytes += c < 0x80 ? 1 : c < 0x800 || Character.isSurrogate(c) ? 2 : 3;
            if (sb != null) {
                if (bytes > maxBytes) {
                    sb = null; // from here on only counted
                } else {
                    sb.append(c);
                }
            }
        }
    }

    private Line line(StringBuilder sb, long bytes) {
        number++;
        return new Line(number, sb == null ? null : sb.toString(), bytes);
    }

    /** The report for a line over the bound: its number, its size and the bound. */
    static InvalidLineException tooLong(Line line, int maxBytes) {
        return new InvalidLineException(line.number(), "(line)", line.bytes() + " bytes, more than the " + maxBytes
                + " bytes a line may have (" + (maxBytes >= 1 << 20 && maxBytes % (1 << 20) == 0 ? maxBytes / (1 << 20) + " MiB"
                : maxBytes + " B") + "; a notification is at most about 32 KiB, 240 KiB of split text); not read as JSON");
    }

    @Override
    public void close() throws IOException {
        in.close();
    }
}
