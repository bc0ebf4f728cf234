package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.chat.Identifiers;
import dev.sluice.sender.budget.BudgetKeys;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

/**
 * The tools apply the topology's id rules ({@link Identifiers}) before writing: {@code sluice produce} reports the line,
 * the field and the value escaped (a line of its own, never a raw newline), as the topology's dead letter would say it;
 * {@code sluice chat-event} refuses (exit 2) naming the option and the value and writes nothing. The bot-id rule is the
 * senders' own (their config refuses any other bot id).
 */
class IdRulesToolsTest {
    private final NotificationJson json = new NotificationJson(Clock.fixed(Instant.parse("2025-07-30T01:02:03Z"), ZoneOffset.UTC));

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{\"id\":\"a\",\"bot_id\":\"al erts\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\"}|line 4, field 'bot_id': field bot_id 'al erts' is not a bot id: expected 1 to 64 of A-Z",
            "{\"id\":\"a\",\"bot_id\":\"alerts\\n\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\"}|line 4, field 'bot_id': field bot_id 'alerts\\n' is not a bot id",
            "{\"id\":\"a\",\"bot_id\":\"b\u00e4r\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\"}|line 4, field 'bot_id': field bot_id 'b\u00e4r' is not a bot id",
            "{\"id\":\"a\",\"bot_id\":\"b\",\"bot_pool\":[\"b 2\"],\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\"}|line 4, field 'bot_pool': field bot_pool 'b 2' is not a bot id",
            "{\"id\":\"a\\u0000\",\"bot_id\":\"b\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\"}|line 4, field 'id': field id contains a control character: 'a\\u0000'",
            "{\"id\":\"a\",\"bot_id\":\"b\",\"chat_id\":\"10\\n01\",\"kind\":\"k\",\"text\":\"t\"}|line 4, field 'chat_id': field chat_id contains a control character: '10\\n01' (notification id a)",
            "{\"id\":\"a\",\"bot_id\":\"b\",\"chat_id\":\"1\",\"kind\":\"k\\r\",\"text\":\"t\"}|line 4, field 'kind': field kind contains a control character: 'k\\r'",
            "{\"id\":\"a\",\"bot_id\":\"b\",\"chat_id\":\"1\",\"kind\":\"k\",\"edit_part\":\"reply_markup\"}|line 4, field 'edit_part': field edit_part REPLY_MARKUP is set without edit_of",
            "{\"id\":\"a\",\"bot_id\":\"b\",\"chat_id\":\"1\",\"kind\":\"k\",\"text\":\"t\",\"edit_part\":\"caption\"}|line 4, field 'edit_part': field edit_part CAPTION is set without edit_of"})
    void produceReportsTheFieldAndTheEscapedValue(String line, String message) {
        assertThatThrownBy(() -> json.parse(4, line)).isInstanceOf(InvalidLineException.class).hasMessageStartingWith(message)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n", "\r", "\u0000"));
    }

    @Test
    void produceAcceptsEveryBotIdASenderCanHave() {
        String line = "{\"id\":\"a\",\"bot_id\":\"ext:sms-api.prod_2\",\"bot_pool\":[\"Alerts-2\"],\"chat_id\":\" @Team \",\"kind\":\"k\",\"text\":\"a\\nb\"}";
        assertThat(json.parse(1, line).getBotId()).isEqualTo("ext:sms-api.prod_2");
    }

    @Test
    void chatEventRefusesBeforeWriting() {
        refuses("--bot: field bot_id 'al erts' is not a bot id: expected '*' or 1 to 64", "BLOCKED", "--bot", "al erts", "--chat", "1001");
        refuses("--chat: field chat_id '10\\n01' contains a control character; nothing was written", "ACTIVE", "--bot", "alerts", "--chat", "10\n01");
        refuses("--chat: field chat_id '1001\\u001Falerts' contains a control character", "BLOCKED", "--bot", "*", "--chat", "1001\u001Falerts");
        refuses("--new-chat: field new_chat_id '-100\\t2' contains a control character", "MIGRATED", "--bot", "*", "--chat", "-4001",
                "--new-chat", "-100\t2");
    }

    private static void refuses(String message, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        String[] all = java.util.stream.Stream.concat(java.util.Arrays.stream(args), java.util.stream.Stream.of(
                // nothing listens on port 1: a command that got as far as writing would fail otherwise
                "-D", "bootstrap.servers=127.0.0.1:1", "-D", "schema.registry.url=http://127.0.0.1:1")).toArray(String[]::new);
        int exit = new CommandLine(new ChatEventCommand()).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true)).execute(all);
        assertThat(exit).as(err.toString()).isEqualTo(2);
        assertThat(err.toString().lines().findFirst().orElseThrow()).startsWith(message);
        assertThat(out.toString()).isEmpty();
    }

    @Test
    void theBotIdRuleIsTheSendersOwn() {
        assertThat(Identifiers.BOT_ID_PATTERN).isEqualTo(BudgetKeys.BOT_ID.pattern());
        for (char c = 0; c < 0x3000; c++) {
            String id = "a" + c + "b";
            assertThat(Identifiers.isBotId(id)).as("U+%04X", (int) c).isEqualTo(BudgetKeys.isBotId(id));
        }
        assertThat(Identifiers.isBotId("b".repeat(64))).isTrue();
        assertThat(Identifiers.isBotId("b".repeat(65))).isFalse();
    }
}
