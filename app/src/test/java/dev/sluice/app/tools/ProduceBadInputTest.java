package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * What {@code sluice produce --file F --fail-fast} says of input an outside trial fed it: bytes that are not UTF-8, a key
 * twice in one object, a {@code not_before} the topology would dead-letter (past {@code schedule.max.horizon.ms}) and an
 * {@code expires_at} not after {@code not_before}. {@code --fail-fast} checks every line before it connects, so no
 * broker runs here (nothing listens on port 1): each case is exit 1 and one line naming the line, the field and the value.
 */
class ProduceBadInputTest {
    private static final String GOOD = "{\"id\":\"ok\",\"bot_id\":\"alerts\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\"}";

    @TempDir
    Path dir;

    private record Run(int exit, String out, String err) {
    }

    private Run failFast(byte[] content, String... extra) throws IOException {
        Path file = dir.resolve("events-" + System.nanoTime() + ".jsonl");
        Files.write(file, content);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        String[] args = {"--file", file.toString(), "--fail-fast", "--progress", "NONE",
                "-D", "bootstrap.servers=127.0.0.1:1", "-D", "schema.registry.url=http://127.0.0.1:1"};
        String[] all = java.util.Arrays.copyOf(args, args.length + extra.length);
        System.arraycopy(extra, 0, all, args.length, extra.length);
        int exit = new CommandLine(new ProduceCommand()).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                .execute(all);
        return new Run(exit, out.toString(), err.toString());
    }

    private Run failFast(String second, String... extra) throws IOException {
        return failFast((GOOD + "\n" + second + "\n" + GOOD + "\n").getBytes(StandardCharsets.UTF_8), extra);
    }

    private static String line(String fields) {
        return "{\"id\":\"n-2\",\"bot_id\":\"alerts\",\"chat_id\":\"1\",\"kind\":\"k\"," + fields + "}";
    }

    @Test
    void bytesThatAreNotUtf8AreABadLineNamingItsNumberAndOffsetNeverTheBytes() throws IOException {
        ByteArrayOutputStream content = new ByteArrayOutputStream();
        content.writeBytes((GOOD + "\n").getBytes(StandardCharsets.UTF_8));
        content.writeBytes("{\"id\":\"n-2\",\"bot_id\":\"alerts\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"caf".getBytes(StandardCharsets.UTF_8));
        int offset = content.size() - (GOOD.length() + 1);
        content.write(0xE9); // Latin-1 é: not UTF-8
        content.writeBytes("\"}\n".getBytes(StandardCharsets.UTF_8));
        content.writeBytes((GOOD + "\n").getBytes(StandardCharsets.UTF_8));

        Run r = failFast(content.toByteArray());

        assertThat(r.exit()).as(r.err()).isEqualTo(1);
        assertThat(r.err().lines()).containsExactly(
                "produce: line 2, field '(line)': invalid UTF-8 at byte offset " + offset + " of the line (0xE9; offsets from 0, "
                        + (offset + 3) + " bytes in the line); not read as JSON",
                "produce: --fail-fast: nothing was written to notifications");
        assertThat(r.err()).doesNotContain("\uFFFD").doesNotContain("MalformedInput");
    }

    @Test
    void invisibleCharactersOfBadInputNeverReachTheTerminalRaw() throws IOException {
        // found from outside: an unknown field's name and a parser's quote of the input were printed raw
        Run r = failFast(line("\"text\":\"t\",\"x\u202E\":1"));
        assertThat(r.exit()).as(r.err()).isEqualTo(1);
        assertThat(r.err()).contains("x\\u202E").doesNotContain("\u202E");
        Run control = failFast("{\u0001\u001B[2J");
        assertThat(control.exit()).as(control.err()).isEqualTo(1);
        assertThat(control.err()).doesNotContain("\u001B").doesNotContain("\u0001");
    }

    @Test
    void aKeyTwiceInOneObjectIsRefusedNamingTheKey() throws IOException {
        Run r = failFast(line("\"text\":\"first\",\"text\":\"second\""));
        assertThat(r.exit()).as(r.err()).isEqualTo(1);
        assertThat(r.err()).startsWith("produce: line 2, field 'text': appears twice in one object");

        Run nested = failFast(line("\"text\":\"t\",\"attributes\":{\"a\":\"1\",\"a\":\"2\"}"));
        assertThat(nested.exit()).as(nested.err()).isEqualTo(1);
        assertThat(nested.err()).startsWith("produce: line 2, field 'attributes.a': appears twice in one object");
    }

    @Test
    void aNotBeforePastTheScheduleHorizonIsRefusedAsTheTopologyWouldDeadLetterIt() throws IOException {
        Run r = failFast(line("\"text\":\"t\",\"not_before\":\"9999-01-01T00:00:00Z\""));
        assertThat(r.exit()).as(r.err()).isEqualTo(1);
        assertThat(r.err()).startsWith("produce: line 2, field 'not_before': field not_before 9999-01-01T00:00:00Z is more than 34560000000 ms after now")
                .contains("schedule.max.horizon.ms");

        // the same key as the topology's: a smaller horizon refuses a nearer time, a larger one accepts 9999
        String inTenDays = java.time.Instant.now().plus(java.time.Duration.ofDays(10)).toString();
        Run shorter = failFast(line("\"text\":\"t\",\"not_before\":\"" + inTenDays + "\""), "-D", "schedule.max.horizon.ms=86400000");
        assertThat(shorter.err()).startsWith("produce: line 2, field 'not_before': field not_before " + inTenDays + " is more than 86400000 ms");
        Run longer = failFast(line("\"text\":\"t\",\"not_before\":\"9999-01-01T00:00:00Z\""), "-D", "schedule.max.horizon.ms=" + Long.MAX_VALUE);
        assertThat(longer.err()).doesNotContain("line 2");
    }

    @Test
    void anExpiresAtNotAfterNotBeforeIsRefusedNamingBothValues() throws IOException {
        java.time.Instant notBefore = java.time.Instant.now().plus(java.time.Duration.ofDays(10)).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
        java.time.Instant expiresAt = notBefore.minus(java.time.Duration.ofDays(1));
        Run r = failFast(line("\"text\":\"t\",\"not_before\":\"" + notBefore + "\",\"expires_at\":\"" + expiresAt + "\""));
        assertThat(r.exit()).as(r.err()).isEqualTo(1);
        assertThat(r.err()).startsWith("produce: line 2, field 'expires_at': " + expiresAt + " is not after not_before " + notBefore);
        Run same = failFast(line("\"text\":\"t\",\"not_before\":\"" + notBefore + "\",\"expires_at\":\"" + notBefore + "\""));
        assertThat(same.err()).startsWith("produce: line 2, field 'expires_at': " + notBefore + " is not after not_before " + notBefore);
        Run after = failFast(line("\"text\":\"t\",\"not_before\":\"" + expiresAt + "\",\"expires_at\":\"" + notBefore + "\""));
        assertThat(after.err()).doesNotContain("line 2");
    }
}
