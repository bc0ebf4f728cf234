package dev.sluice.topology;

import static dev.sluice.topology.Harness.notification;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.ChatEventType;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.EditPart;
import dev.sluice.avro.OutboundMessage;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The id rules ({@code dev.sluice.chat.Identifiers}) on the TopologyTestDriver: a bot id no sender can have a token for,
 * a control character in an id or key field, and an {@code edit_part} without {@code edit_of} are dead-lettered with a
 * FAILED result whose reason names the field and shows the value escaped (one line); a chat event with a control
 * character in its chat id is skipped (before, a chat id ending in U+001F and a bot id wrote the entry of that bot in
 * that chat: a forged BLOCKED).
 */
class IdRulesTopologyTest extends HarnessTest {
    private static final Instant TEN = Instant.parse("2026-03-02T10:00:00Z");

    @Test
    void badIdsAreDeadLetteredWithOneFailedResultNamingFieldAndEscapedValue() {
        h = new Harness(stateDir, TEN, Map.of());
        h.send(notification("space", "42", TEN).setBotId("al erts").build());
        h.send(notification("newline", "42", TEN).setBotId("alerts\n").build());
        h.send(notification("pool", "42", TEN).setBotPool(List.of("alerts", "b/2")).build());
        h.send(notification("bell\u0007", "42", TEN).build());
        h.send(notification("kind", "42", TEN).setKind("task\nupdated").build());
        h.send(notification("chat", "10\n01", TEN).build());
        h.send(notification("part", "42", TEN).setEditPart(EditPart.REPLY_MARKUP).build());
        h.send(notification("ok", "42", TEN).setBotId("ext:sms-api.prod_2").build());

        List<String> reasons = h.dlq.readRecordsToList().stream()
                .map(r -> new String(r.headers().lastHeader(DeadLetterHeaders.REASON).value(), StandardCharsets.UTF_8)).toList();
        assertThat(reasons).containsExactly(
                "field bot_id 'al erts' is not a bot id: expected " + dev.sluice.chat.Identifiers.BOT_ID_RULE + " (notification id space)",
                "field bot_id 'alerts\\n' is not a bot id: expected " + dev.sluice.chat.Identifiers.BOT_ID_RULE + " (notification id newline)",
                "field bot_pool 'b/2' is not a bot id: expected " + dev.sluice.chat.Identifiers.BOT_ID_RULE + " (notification id pool)",
                "field id contains a control character: 'bell\\u0007' (notification id bell\\u0007)",
                "field kind contains a control character: 'task\\nupdated' (notification id kind)",
                "field chat_id contains a control character: '10\\n01' (notification id chat)",
                "field edit_part REPLY_MARKUP is set without edit_of: it says what an edit replaces; name the notification to"
                        + " edit in edit_of, or leave edit_part out (notification id part)");
        assertThat(reasons).noneMatch(r -> r.contains("\n") || r.contains("\u0007"));
        List<DeliveryResult> results = h.resultsOut.readValuesToList();
        assertThat(results).hasSize(7).allMatch(r -> r.getStatus() == DeliveryStatus.FAILED)
                .allMatch(r -> r.getReason().startsWith("dead-lettered to notifications.dlq: field "));
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("ok");
    }

    @Test
    void aChatEventWithAControlCharacterInItsChatIdIsSkipped() {
        h = new Harness(stateDir, TEN, Map.of());
        // "1001" U+001F "alerts" is the chat-status key of (chat 1001, bot alerts): for every bot ('*') it was that entry
        h.chatEvent("*", "1001\u001Falerts", ChatEventType.BLOCKED, null);
        h.chatEvent("al erts", "1001", ChatEventType.BLOCKED, null);
        h.send(notification("after", "1001", TEN).build());
        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("after");
        assertThat(h.resultsOut.readValuesToList()).isEmpty();
    }
}
