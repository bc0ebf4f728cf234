package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class NotificationJsonTest {
    private static final Instant NOW = Instant.parse("2025-07-30T01:02:03Z");
    private final NotificationJson json = new NotificationJson(Clock.fixed(NOW, ZoneOffset.UTC));

    @Test
    void readsEveryFieldOfTheSchemaWithIsoOrEpochTimes() {
        Notification n = json.parse(1, "{\"id\":\"a\",\"bot_id\":\"alerts\",\"chat_id\":\"@quakes\",\"kind\":\"quake\","
                + "\"event_class\":\"COLLAPSIBLE\",\"user_id\":\"u1\",\"entity\":\"quake-1\",\"text\":\"hi\",\"parse_mode\":\"HTML\","
                + "\"created_at\":1753837200000,\"expires_at\":\"2025-07-30T02:00:00Z\",\"not_before\":\"2025-07-30T01:30:00.5Z\","
                + "\"bot_pool\":[\"a\",\"b\"],\"attributes\":{\"region\":\"Kamchatka\",\"magnitude\":8.8}}");
        assertThat(n.getChatId()).isEqualTo("@quakes");
        assertThat(n.getEventClass()).isEqualTo(NotificationClass.COLLAPSIBLE);
        assertThat(n.getCreatedAt()).isEqualTo(Instant.ofEpochMilli(1753837200000L));
        assertThat(n.getExpiresAt()).isEqualTo(Instant.parse("2025-07-30T02:00:00Z"));
        assertThat(n.getNotBefore()).isEqualTo(Instant.parse("2025-07-30T01:30:00.500Z"));
        assertThat(n.getBotPool()).containsExactly("a", "b");
        assertThat(n.getAttributes()).containsEntry("region", "Kamchatka").containsEntry("magnitude", "8.8");
        assertThat(n.getParseMode()).isEqualTo("HTML");
    }

    @Test
    void createdAtDefaultsToNowAndNumericChatIdsAreText() {
        Notification n = json.parse(1, "{\"id\":\"a\",\"bot_id\":\"alerts\",\"chat_id\":-100123,\"kind\":\"k\",\"text\":\"t\"}");
        assertThat(n.getCreatedAt()).isEqualTo(NOW);
        assertThat(n.getChatId()).isEqualTo("-100123");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{\"id\":\"a\",\"bot_id\":\"b\",\"kind\":\"k\",\"text\":\"t\"}|line 7, field 'chat_id': missing",
            "{\"id\":null,\"bot_id\":\"b\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\"}|line 7, field 'id': null; required fields are",
            "{\"id\":\"a\",\"bot_id\":\"b\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"  \"}|line 7, field 'text': field text is blank",
            "{\"id\":\"a\",\"bot_id\":\"b\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\",\"not_before\":-5}|line 7, field 'not_before': number -5 is not an ISO-8601 instant",
            "{\"id\":\"a\",\"bot_id\":\"b\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\",\"parse_mode\":\"html\"}|line 7, field 'parse_mode': 'html' is not one of MarkdownV2, HTML, Markdown",
            "{\"id\":\"a\",\"bot_id\":\"b\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\",\"bot_pool\":\"b2\"}|line 7, field 'bot_pool': expected an array of strings, got 'b2'",
            "{\"id\":\"a\",\"bot_id\":\"b\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\",\"attributes\":{\"x\":[1]}}|line 7, field 'attributes.x': expected a string",
            "{\"id\":1,\"bot_id\":\"b\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\"}|line 7, field 'id': expected a string, got number 1",
            "[1,2]|line 7, field '(line)': expected a JSON object, got ARRAY",
            "{\"id\":\"a\",\"id\":\"b\",\"bot_id\":\"b\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\"}|line 7, field 'id': appears twice in one object",
            "{\"id\":\"a\",\"bot_id\":\"b\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\",\"reply_markup\":{\"inline_keyboard\":[[{\"text\":\"A\",\"url\":\"https://a.example\"},{\"text\":\"B\",\"text\":\"C\"}]]}}|line 7, field 'reply_markup.inline_keyboard[0][1].text': appears twice",
            "{\"id\":\"a\",\"bot_id\":\"b\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\",\"not_before\":\"2026-10-01T00:00:00Z\"}|line 7, field 'not_before': field not_before 2026-10-01T00:00:00Z is more than 34560000000 ms after now (2025-07-30T01:02:03Z; schedule.max.horizon.ms)",
            "{\"id\":\"a\",\"bot_id\":\"b\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\",\"not_before\":\"2025-08-01T00:00:00Z\",\"expires_at\":1753837200000}|line 7, field 'expires_at': 2025-07-30T01:00:00Z is not after not_before 2025-08-01T00:00:00Z"})
    void eachBadLineNamesLineFieldAndValue(String line, String message) {
        assertThatThrownBy(() -> json.parse(7, line)).isInstanceOf(InvalidLineException.class).hasMessageStartingWith(message);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "not json|line 3, field '(line)': not JSON: unexpected 'not' at column 1",
            "{\"id\" 1}|line 3, field '(line)': not JSON: unexpected '1' at column 7",
            "{'id':1}|line 3, field '(line)': not JSON: unexpected ''id'' at column 2",
            "{\"id\":1,|line 3, field '(line)': not JSON: the line ends before the JSON object is complete",
            "{\"id\":\"a\"}}|line 3, field '(line)': not JSON: unexpected '}' at column 11"})
    void malformedJsonIsReportedByColumnWithoutParserInternals(String line, String message) {
        assertThatThrownBy(() -> json.parse(3, line)).isInstanceOf(InvalidLineException.class).hasMessage(message)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("Source", "code 49", "JSON String, Number", "REDACTED"));
    }

    @Test
    void plainProgressLinesCountRecordsAndShowTheMessage() {
        StringWriter out = new StringWriter();
        try (Progress p = Progress.open(Progress.Mode.PLAIN, "replay", 4, new PrintWriter(out))) {
            p.step(3);
            p.message("3 matching");
        }
        assertThat(out.toString()).contains("replay: 3/4 records (75%), 3 matching");
        StringWriter none = new StringWriter();
        try (Progress p = Progress.open(Progress.Mode.NONE, "replay", 4, new PrintWriter(none))) {
            p.step(4);
        }
        assertThat(none.toString()).isEmpty();
    }

    @Test
    void theTerminalBarRuns() {
        try (Progress p = Progress.open(Progress.Mode.BAR, "produce", 10, new PrintWriter(new StringWriter()))) {
            p.max(20);
            p.step(20);
            p.message("20 written");
        }
    }
}
