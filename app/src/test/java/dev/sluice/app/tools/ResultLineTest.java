package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Lane;
import dev.sluice.avro.MessagePart;
import dev.sluice.avro.NotificationClass;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * {@code sluice results --json} prints every DeliveryResult field under its schema name, as docs/operations.md says
 * (before: {@code id} instead of {@code message_id}, and no {@code provider_message_id}, {@code digest_count},
 * {@code migrated_to_chat_id}, {@code part}).
 */
class ResultLineTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static List<String> expectedKeys() {
        List<String> keys = new ArrayList<>();
        for (Schema.Field f : DeliveryResult.getClassSchema().getFields()) {
            keys.add(f.name());
        }
        keys.addAll(List.of("lag_ms", "topic", "partition", "offset"));
        return keys;
    }

    private static List<String> keysOf(JsonNode o) {
        List<String> keys = new ArrayList<>();
        o.fieldNames().forEachRemaining(keys::add);
        return keys;
    }

    @Test
    void everyDeliveryResultFieldIsPrintedUnderItsSchemaName() throws Exception {
        Instant due = Instant.parse("2026-12-01T05:23:00Z");
        DeliveryResult r = DeliveryResult.newBuilder().setMessageId("n-1#2/3").setBotId("alerts").setChatId("1001")
                .setStatus(DeliveryStatus.DELIVERED).setEventClass(NotificationClass.ROUTINE).setLane(Lane.LIVE)
                .setProviderMessageId(4242L).setAttempts(1).setDueAt(due).setSentAt(due.plusMillis(565))
                .setResultAt(due.plusMillis(600)).setDigestCount(3).setFoldedIds(List.of("a", "b", "c"))
                .setMigratedToChatId("-1002").setSenderInstance("sender-1")
                .setPart(MessagePart.newBuilder().setIndex(2).setCount(3).setParentId("n-1").build()).build();
        JsonNode o = JSON.readTree(ResultLine.of(r, new ConsumerRecord<>("delivery.results", 2, 17L, "k", "v")).toJson());
        assertThat(keysOf(o)).containsExactlyElementsOf(expectedKeys());
        assertThat(o.get("message_id").asText()).isEqualTo("n-1#2/3");
        assertThat(o.get("provider_message_id").asLong()).isEqualTo(4242L);
        assertThat(o.get("digest_count").asInt()).isEqualTo(3);
        assertThat(o.get("migrated_to_chat_id").asText()).isEqualTo("-1002");
        assertThat(o.get("part").toString()).isEqualTo("{\"index\":2,\"count\":3,\"parent_id\":\"n-1\"}");
        assertThat(o.get("lag_ms").asLong()).isEqualTo(565);
        assertThat(o.get("due_at").asText()).isEqualTo("2026-12-01T05:23:00Z");
        assertThat(o.get("offset").asLong()).isEqualTo(17L);
    }

    @Test
    void aDeadLetterHasTheSameKeysWithNullWhereTheRecordDoesNotSay() throws Exception {
        ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>("notifications.dlq", 0, 5L, "9004".getBytes(), new byte[]{1});
        JsonNode o = JSON.readTree(ResultLine.deadLetter(record, null).toJson());
        assertThat(keysOf(o)).containsExactlyElementsOf(expectedKeys());
        assertThat(o.get("status").asText()).isEqualTo(ResultLine.DEAD_LETTER);
        assertThat(o.get("part").isNull()).isTrue();
        assertThat(o.get("provider_message_id").isNull()).isTrue();
    }
}
