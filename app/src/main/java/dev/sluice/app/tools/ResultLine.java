package dev.sluice.app.tools;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.MessagePart;
import dev.sluice.avro.Notification;
import dev.sluice.topology.DeadLetterHeaders;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * One line of {@code sluice results}: a delivery result, or a dead letter (status {@value #DEAD_LETTER}). Lag is
 * {@code due_at -> sent_at} for a message that reached the provider, else {@code due_at -> result_at}; none without
 * {@code due_at}. Immutable.
 *
 * @param id the message id (a digest's own id; {@link #foldedIds} lists the notifications it settled)
 * @param recordAt the Kafka record's timestamp
 * @param part which part of a split notification this result is for; null for a whole one
 */
public record ResultLine(String id, String status, String chat, String botId, String eventClass, String lane,
                         String reason, Integer errorCode, Long lagMs, int attempts, Instant dueAt, Instant sentAt,
                         Instant resultAt, List<String> foldedIds, String senderInstance, String topic, int partition,
                         long offset, Instant recordAt, Long providerMessageId, int digestCount, String migratedToChatId,
                         MessagePart part) {
    /** The status shown for a record of the dead-letter topic. */
    public static final String DEAD_LETTER = "DEAD_LETTER";
    private static final ObjectMapper JSON = new ObjectMapper();

    public static ResultLine of(DeliveryResult r, ConsumerRecord<?, ?> record) {
        Instant due = r.getDueAt();
        Instant end = r.getSentAt() != null ? r.getSentAt() : r.getResultAt();
        Long lag = due == null || end == null ? null : Math.max(0, end.toEpochMilli() - due.toEpochMilli());
        return new ResultLine(r.getMessageId(), r.getStatus().name(), r.getChatId(), r.getBotId(),
                r.getEventClass() == null ? null : r.getEventClass().name(), r.getLane().name(), r.getReason(),
                r.getErrorCode(), lag, r.getAttempts(), due, r.getSentAt(), r.getResultAt(), List.copyOf(r.getFoldedIds()),
                r.getSenderInstance(), record.topic(), record.partition(), record.offset(), Instant.ofEpochMilli(record.timestamp()),
                r.getProviderMessageId(), r.getDigestCount(), r.getMigratedToChatId(), r.getPart());
    }

    /**
     * A dead letter: the original value when it still decodes as a Notification (a record refused by the
     * topology's rules), else only its key and where it came from (a record that is not Avro at all).
     *
     * @param decoded the value as a Notification, or null when it does not decode
     */
    public static ResultLine deadLetter(ConsumerRecord<byte[], byte[]> record, Notification decoded) {
        String source = header(record, DeadLetterHeaders.SOURCE_TOPIC);
        String where = source == null ? record.topic() + ":" + record.partition() + ":" + record.offset()
                : source + ":" + header(record, DeadLetterHeaders.SOURCE_PARTITION) + ":" + header(record, DeadLetterHeaders.SOURCE_OFFSET);
        String key = record.key() == null ? null : new String(record.key(), StandardCharsets.UTF_8);
        return new ResultLine(decoded != null ? decoded.getId() : where, DEAD_LETTER,
                decoded != null ? decoded.getChatId() : key, decoded != null ? decoded.getBotId() : null,
                decoded != null && decoded.getEventClass() != null ? decoded.getEventClass().name() : null, null,
                header(record, DeadLetterHeaders.REASON), null, null, 0, null, null, Instant.ofEpochMilli(record.timestamp()),
                List.of(), "topology", record.topic(), record.partition(), record.offset(), Instant.ofEpochMilli(record.timestamp()),
                null, 0, null, null);
    }

    /** Whether {@code wanted} is this line's id or one of the notifications it folded. */
    public boolean concerns(String wanted) {
        return id.equals(wanted) || foldedIds.contains(wanted);
    }

    /** Notifications this line settles: its folded ids, or one. */
    public int settles() {
        return foldedIds.isEmpty() ? 1 : foldedIds.size();
    }

    /** {@code 2025-07-30T00:00:01.123Z DELIVERED id=p-1 chat=1001 class=CRITICAL lag_ms=1234 reason=...}. */
    public String toText() {
        StringBuilder sb = new StringBuilder();
        sb.append(resultAt != null ? resultAt : recordAt).append(' ')
                .append(String.format(Locale.ROOT, "%-16s", status))
                .append(" id=").append(escape(id))
                .append(" chat=").append(chat == null ? "-" : escape(chat));
        if (eventClass != null) {
            sb.append(" class=").append(escape(eventClass));
        }
        sb.append(" lag_ms=").append(lagMs == null ? "-" : lagMs.toString());
        if (!foldedIds.isEmpty()) {
            sb.append(" folded=").append(foldedIds.size());
        }
        if (attempts > 0) {
            sb.append(" attempts=").append(attempts);
        }
        if (errorCode != null) {
            sb.append(" error_code=").append(errorCode);
        }
        if (reason != null) {
            sb.append(" reason=").append(escape(ToolErrors.safe(reason)));
        }
        return sb.toString();
    }

    /** For the one-line text: {@link dev.sluice.chat.Identifiers#escape}, the one escaping rule of every tool's line. */
    static String escape(String text) {
        return dev.sluice.chat.Identifiers.escape(text);
    }

    /**
     * One JSON object (a line of {@code --json}): every DeliveryResult field under its name in DeliveryResult.avsc
     * ({@code message_id}, ..., {@code part} as {@code {index, count, parent_id}} or null), times ISO-8601, then
     * {@code lag_ms}, {@code topic}, {@code partition}, {@code offset}. A dead letter has the same keys, null where
     * the record does not say ({@code provider_message_id}, {@code part}, ...).
     */
    public String toJson() {
        ObjectNode o = JSON.createObjectNode();
        o.put("message_id", id);
        o.put("bot_id", botId);
        o.put("chat_id", chat);
        o.put("status", status);
        o.put("event_class", eventClass);
        o.put("lane", lane);
        o.put("reason", reason == null ? null : ToolErrors.safe(reason));
        o.put("error_code", errorCode);
        o.put("provider_message_id", providerMessageId);
        o.put("attempts", attempts);
        o.put("due_at", dueAt == null ? null : dueAt.toString());
        o.put("sent_at", sentAt == null ? null : sentAt.toString());
        o.put("result_at", resultAt == null ? null : resultAt.toString());
        o.put("digest_count", digestCount);
        var folded = o.putArray("folded_ids");
        foldedIds.forEach(folded::add);
        o.put("migrated_to_chat_id", migratedToChatId);
        o.put("sender_instance", senderInstance);
        if (part == null) {
            o.putNull("part");
        } else {
            o.putObject("part").put("index", part.getIndex()).put("count", part.getCount()).put("parent_id", part.getParentId());
        }
        o.put("lag_ms", lagMs);
        o.put("topic", topic);
        o.put("partition", partition);
        o.put("offset", offset);
        return o.toString();
    }

    private static String header(ConsumerRecord<?, ?> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}
