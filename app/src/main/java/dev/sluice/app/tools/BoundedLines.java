package dev.sluice.app.tools;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The lines of a UTF-8 byte stream, each read into memory only up to a bound in bytes: a longer line is skipped to its
 * end (counted, never held) and reported as {@link Line#tooLong()}, so a huge line costs no memory and gets an error
 * that names the bound instead of a parser's. Each line is decoded on its own and strictly ({@link CodingErrorAction#REPORT}):
 * a line that is not valid UTF-8 is reported as {@link Line#invalidUtf8()} with the byte offset of the first bad byte,
 * and the following lines are read as usual (no U+FFFD replacement, no exception that ends the whole input). Line ends
 * as {@link java.io.BufferedReader#readLine()} sees them ({@code \n}, {@code \r\n} or {@code \r}; neither byte occurs
 * inside a multi-byte UTF-8 sequence, so lines are split before decoding). A last line the input ends inside, without a
 * line end, is returned too, marked as not {@link Line#ended()}. One thread reads; closing closes the stream; any thread
 * may ask {@link #pendingBytes()}.
 */
final class BoundedLines implements AutoCloseable {
    /**
     * What {@code sluice produce} reads of one line: 1 MiB, a producer's default {@code max.request.size}. A valid
     * notification is far smaller (its fields are bounded: about 32 KiB, or about 240 KiB of text with
     * {@code text.too.long=split}; escaped in JSON at most some 500 KiB), so a longer line can never be one.
     */
    static final int MAX_LINE_BYTES = 1 << 20;

    /**
     * One line: its 1-based number, its text (null when too long or not UTF-8), its length in UTF-8 bytes (so far, when
     * too long), when it is not valid UTF-8 the 0-based byte offset in the line of the first invalid byte (else -1), the
     * bound it was read with (what a report of a line too long names), and whether a line end ended it (false: the
     * input ended inside it).
     */
    record Line(long number, String text, long bytes, long invalidAt, String invalidBytes, int maxBytes, boolean ended) {
        boolean tooLong() {
            return text == null && invalidAt < 0;
        }

        boolean invalidUtf8() {
            return invalidAt >= 0;
        }

        /** Too long or not UTF-8: a bad line whatever it holds. */
        boolean unreadable() {
            return text == null;
        }
    }

    private final InputStream in;
    private final int maxBytes;
    private final byte[] buf = new byte[8192];
    private final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
    private byte[] line = new byte[256];
    private int pos;
    private int end;
    private long number;
    private boolean skipLf;
    /** The bytes of the line being read while {@link #next()} waits for more input; 0 at a line's start. */
    private volatile long pending;

    /** @param maxBytes the bound per line; 0 only counts lines (nothing is held or decoded) */
    BoundedLines(InputStream in, int maxBytes) {
        this.in = in;
        this.maxBytes = maxBytes;
    }

    /** The next line, or null at the end of the input. */
    Line next() throws IOException {
        int held = 0;
        long bytes = 0;
        boolean any = false;
        while (true) {
            if (pos == end) {
                pending = bytes;
                end = in.read(buf, 0, buf.length);
                pos = 0;
                if (end <= 0) {
                    end = 0;
                    pending = 0;
                    return any ? line(held, bytes, false) : null;
                }
            }
            byte b = buf[pos++];
            if (skipLf) {
                skipLf = false;
                if (b == '\n') {
                    continue;
                }
            }
            if (b == '\n' || b == '\r') {
                skipLf = b == '\r';
                return line(held, bytes, true);
            }
            any = true;
            bytes++;
            if (bytes <= maxBytes) {
                if (held == line.length) {
                    line = Arrays.copyOf(line, Math.min(maxBytes, line.length * 2));
                }
                line[held++] = b;
            }
        }
    }

    /**
     * How many bytes of a line {@link #next()} holds while it waits for the rest (0 when it waits at a line's start, or is
     * not waiting): a half-written line, when a stop comes while stdin is still open.
     */
    long pendingBytes() {
        return pending;
    }

    private Line line(int held, long bytes, boolean ended) {
        number++;
        pending = 0;
        if (bytes > maxBytes) {
            return new Line(number, null, bytes, -1, null, maxBytes, ended);
        }
        ByteBuffer bytesIn = ByteBuffer.wrap(line, 0, held);
        CharBuffer chars = CharBuffer.allocate(held); // UTF-8 never decodes to more UTF-16 units than bytes
        decoder.reset();
        CoderResult r = decoder.decode(bytesIn, chars, true);
        if (!r.isError()) {
            r = decoder.flush(chars);
        }
        if (r.isError()) {
            int at = bytesIn.position();
            return new Line(number, null, bytes, at, hex(line, at, Math.min(held, at + Math.max(1, r.length()))), maxBytes, ended);
        }
        chars.flip();
        return new Line(number, chars.toString(), bytes, -1, null, maxBytes, ended);
    }

    /** The bad bytes as hex ({@code 0xC3 0x28}): never the raw bytes, which a terminal might act on. */
    private static String hex(byte[] a, int from, int to) {
        StringBuilder sb = new StringBuilder();
        for (int i = from; i < to; i++) {
            sb.append(sb.length() == 0 ? "" : " ").append(String.format("0x%02X", a[i] & 0xff));
        }
        return sb.toString();
    }

    /** The report for a line over the bound: its number, its size and the bound. */
    static InvalidLineException tooLong(Line line, int maxBytes) {
        return new InvalidLineException(line.number(), "(line)", line.bytes() + " bytes, more than the " + maxBytes
                + " bytes a line may have (" + (maxBytes >= 1 << 20 && maxBytes % (1 << 20) == 0 ? maxBytes / (1 << 20) + " MiB"
                : maxBytes + " B") + "; a notification is at most about 32 KiB, 240 KiB of split text); not read as JSON");
    }

    /** The report for a line that is not UTF-8: its number and where, never its bytes themselves. */
    static InvalidLineException invalidUtf8(Line line) {
        return new InvalidLineException(line.number(), "(line)", "invalid UTF-8 at byte offset " + line.invalidAt()
                + " of the line (" + line.invalidBytes() + "; offsets from 0, " + line.bytes() + " bytes in the line);"
                + " not read as JSON");
    }

    /** The report for any unreadable line ({@link Line#unreadable()}); a line too long names the bound it was read with. */
    static InvalidLineException unreadable(Line line) {
        return line.invalidUtf8() ? invalidUtf8(line) : tooLong(line, line.maxBytes());
    }

    @Override
    public void close() throws IOException {
        in.close();
    }
}
