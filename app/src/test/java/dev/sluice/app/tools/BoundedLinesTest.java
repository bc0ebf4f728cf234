package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.ByteArrayInputStream;
import java.io.StringWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Lines read with a bound: the line ends {@code readLine} knows, a line over the bound counted and never held, and
 * {@code sluice produce} on a 50 MB line (what a newcomer fed it: reported as "not JSON" before, by the JSON parser's
 * own string-length limit) names the line, its size and the bound.
 */
class BoundedLinesTest {
    @TempDir
    Path dir;

    private static List<String> read(String text, int max) throws IOException {
        return read(text.getBytes(StandardCharsets.UTF_8), max);
    }

    private static List<String> read(byte[] bytes, int max) throws IOException {
        List<String> out = new ArrayList<>();
        try (BoundedLines in = new BoundedLines(new ByteArrayInputStream(bytes), max)) {
            for (BoundedLines.Line l = in.next(); l != null; l = in.next()) {
                out.add(l.number() + ":" + (l.tooLong() ? "TOO LONG " + l.bytes()
                        : l.invalidUtf8() ? "NOT UTF-8 at " + l.invalidAt() + " (" + l.invalidBytes() + ")" : l.text()));
            }
        }
        return out;
    }

    private static byte[] bytes(Object... parts) {
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        for (Object p : parts) {
            if (p instanceof String s) {
                b.writeBytes(s.getBytes(StandardCharsets.UTF_8));
            } else {
                b.write((Integer) p);
            }
        }
        return b.toByteArray();
    }

    @Test
    void aLineThatIsNotUtf8IsReportedWithTheOffsetOfItsFirstBadByteAndTheNextLinesAreRead() throws IOException {
        // a Latin-1 byte, a lead byte without continuation, an overlong '/', an encoded surrogate, a sequence cut by the line end
        assertThat(read(bytes("ok\n", "caf", 0xE9, "\n", "a", 0xC3, 0x28, "\r\n", 0xC0, 0xAF, "\n", "x", 0xED, 0xA0, 0x80, "\r",
                "\u20ac", 0xE2, 0x82, "\n", "\u00e4 fine\n"), 100)).containsExactly(
                "1:ok", "2:NOT UTF-8 at 3 (0xE9)", "3:NOT UTF-8 at 1 (0xC3)", "4:NOT UTF-8 at 0 (0xC0)", "5:NOT UTF-8 at 1 (0xED 0xA0 0x80)",
                "6:NOT UTF-8 at 3 (0xE2 0x82)", "7:\u00e4 fine");
        // over the bound it is too long, whatever its bytes (never decoded)
        assertThat(read(bytes("abcd", 0xFF, "\nok"), 4)).containsExactly("1:TOO LONG 5", "2:ok");
    }

    @Test
    void lineEndsAreThoseOfReadLine() throws IOException {
        assertThat(read("a\nb\r\nc\rd", 10)).containsExactly("1:a", "2:b", "3:c", "4:d");
        assertThat(read("a\n\n", 10)).containsExactly("1:a", "2:");
        assertThat(read("", 10)).isEmpty();
        assertThat(read("\r\n\r\n", 10)).containsExactly("1:", "2:");
    }

    @Test
    void aLastLineTheInputEndsInsideIsMarkedAndItsBytesArePendingWhileTheRestIsAwaited() throws Exception {
        List<Boolean> ended = new ArrayList<>();
        try (BoundedLines in = new BoundedLines(new ByteArrayInputStream(bytes("a\nb\r\nc\rlast")), 10)) {
            for (BoundedLines.Line l = in.next(); l != null; l = in.next()) {
                ended.add(l.ended());
            }
        }
        assertThat(ended).containsExactly(true, true, true, false);

        java.io.PipedOutputStream typing = new java.io.PipedOutputStream();
        try (BoundedLines in = new BoundedLines(new java.io.PipedInputStream(typing), 10)) {
            typing.write(bytes("x\nhal"));
            assertThat(in.next().text()).isEqualTo("x");
            assertThat(in.pendingBytes()).as("not waiting").isZero();
            java.util.concurrent.CompletableFuture<BoundedLines.Line> next = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return in.next();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> in.pendingBytes() == 3);
            typing.write(bytes("f\n"));
            BoundedLines.Line half = next.get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(half.text()).isEqualTo("half");
            assertThat(half.ended()).isTrue();
            assertThat(in.pendingBytes()).isZero();
        }
    }

    @Test
    void aLineOverTheBoundIsCountedInUtf8BytesAndNotHeld() throws IOException {
        assertThat(read("abcd\nabcde\nok", 4)).containsExactly("1:abcd", "2:TOO LONG 5", "3:ok");
        // ä is 2 bytes, € 3, an emoji (a surrogate pair) 4
        assertThat(read("\u00e4\u20ac\nx\uD83D\uDE00", 5)).containsExactly("1:\u00e4\u20ac", "2:x\uD83D\uDE00");
        assertThat(read("\u00e4\u20ac\u00e4\n", 6)).containsExactly("1:TOO LONG 7");
    }

    @Test
    void theReportOfALineOverTheBoundNamesTheBoundThatAppliedNotTheDefault() throws IOException {
        // found from outside: a reader bounded at 4 bytes said "more than the 1048576 bytes a line may have"
        String tail = "; a notification is at most about 32 KiB, 240 KiB of split text); not read as JSON";
        try (BoundedLines in = new BoundedLines(new ByteArrayInputStream(bytes("abcde\nok\n")), 4)) {
            BoundedLines.Line line = in.next();
            assertThat(line.tooLong()).isTrue();
            assertThat(BoundedLines.unreadable(line)).hasMessage(
                    "line 1, field '(line)': 5 bytes, more than the 4 bytes a line may have (4 B" + tail);
            // what produce reports for it (ProduceRun.parse: the same path as a bad line's report)
            assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> ProduceRun.parse(
                    new NotificationJson(java.time.Clock.systemUTC()), line))).hasMessage(
                    "line 1, field '(line)': 5 bytes, more than the 4 bytes a line may have (4 B" + tail);
        }
        int twoMiB = 2 << 20;
        try (BoundedLines in = new BoundedLines(new ByteArrayInputStream(new byte[twoMiB + 1]), twoMiB)) {
            assertThat(BoundedLines.unreadable(in.next())).hasMessage("line 1, field '(line)': " + (twoMiB + 1)
                    + " bytes, more than the " + twoMiB + " bytes a line may have (2 MiB" + tail);
        }
    }

    @Test
    void produceNamesTheLineItsSizeAndTheBoundForAFiftyMegabyteLine() throws IOException {
        Path file = dir.resolve("big.jsonl");
        int textBytes = 50 * 1024 * 1024;
        String first = "{\"id\":\"ok\",\"bot_id\":\"alerts\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\"}\n";
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            w.write(first);
            w.write("{\"id\":\"big\",\"bot_id\":\"alerts\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"");
            char[] chunk = "x".repeat(1 << 16).toCharArray();
            for (int i = 0; i < textBytes / chunk.length; i++) {
                w.write(chunk);
            }
            w.write("\"}\n");
        }
        long lineBytes = Files.size(file) - first.length() - 1; // the first line, then this one's newline
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        // --fail-fast checks every line before it connects to anything: nothing listens on port 1
        int exit = new CommandLine(new ProduceCommand()).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                .execute("--file", file.toString(), "--fail-fast", "--progress", "NONE",
                        "-D", "bootstrap.servers=127.0.0.1:1", "-D", "schema.registry.url=http://127.0.0.1:1");
        assertThat(exit).as(err.toString()).isEqualTo(1);
        assertThat(err.toString().lines()).containsExactly(
                "produce: line 2, field '(line)': " + lineBytes + " bytes, more than the 1048576 bytes a line may have (1 MiB;"
                        + " a notification is at most about 32 KiB, 240 KiB of split text); not read as JSON",
                "produce: --fail-fast: nothing was written to notifications");
    }
}
