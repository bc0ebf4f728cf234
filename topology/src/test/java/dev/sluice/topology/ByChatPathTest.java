package dev.sluice.topology;

import static dev.sluice.topology.Harness.notification;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.TestOutputTopic;
import org.junit.jupiter.api.Test;

/** Issue 21: records keyed by their chat id skip the {@code by-chat} repartition; others take it; each path keeps per-chat order. */
class ByChatPathTest extends HarnessTest {
    private static final Instant TEN = Instant.parse("2026-03-02T10:00:00Z");

    @Test
    void keyedAndMisKeyedChatsEachKeepTheirOrderAndOnlyTheMisKeyedOnesTakeTheRepartition() {
        h = new Harness(stateDir, TEN, Map.of());
        TestOutputTopic<String, byte[]> repartition = h.driver.createOutputTopic("sluice-topology-by-chat-repartition",
                new StringDeserializer(), new org.apache.kafka.common.serialization.ByteArrayDeserializer());
        for (int i = 0; i < 20; i++) {
            // chat 42 keyed by its chat id (direct), chat 43 keyed by something else, chat @team keyed by its
            // un-normalised id: both through the repartition.
            h.sendKeyed(notification("k-" + i, "42", TEN).setEventClass(NotificationClass.CRITICAL).build(), "42");
            h.send(notification("m-" + i, "43", TEN).setEventClass(NotificationClass.CRITICAL).build());
            h.sendKeyed(notification("u-" + i, " @Team ", TEN).setEventClass(NotificationClass.CRITICAL).build(), " @Team ");
        }
        List<OutboundMessage> out = h.drainLive();
        assertThat(out).hasSize(60);
        assertThat(ids(out, "42")).containsExactlyElementsOf(expected("k-"));
        assertThat(ids(out, "43")).containsExactlyElementsOf(expected("m-"));
        assertThat(ids(out, "@team")).containsExactlyElementsOf(expected("u-"));
        assertThat(repartition.readKeyValuesToList()).extracting(kv -> kv.key)
                .as("only the records not keyed by their normalised chat id are repartitioned")
                .hasSize(40).containsOnly("43", "@team");
    }

    @Test
    void aRecordKeyedByItsChatButInAnotherPartitionThanTheDefaultPartitionersTakesTheRepartition() {
        ChatKeyedInput input = ChatKeyedInput.unknown();
        byte[] key = "123456".getBytes(StandardCharsets.UTF_8);
        assertThat(input.onChatPartition("notifications", 0, key, "123456")).as("partition count unknown").isFalse();
        input.partitions(Map.of("notifications", 8));
        // The Kafka producer's own partitioner is the oracle for where a record keyed by its chat id lands.
        int home = BuiltInPartitioner.partitionForKey(new StringSerializer().serialize("notifications", "123456"), 8);
        for (int p = 0; p < 8; p++) {
            assertThat(input.onChatPartition("notifications", p, key, "123456")).as("partition %d", p).isEqualTo(p == home);
        }
        assertThat(input.onChatPartition("notifications", home, null, "123456")).isFalse();
        assertThat(input.onChatPartition("notifications", home, "producer-1".getBytes(StandardCharsets.UTF_8), "123456")).isFalse();
        assertThat(input.onChatPartition("notifications.backfill", home, key, "123456")).as("count not known for this topic").isFalse();
    }

    private static List<String> ids(List<OutboundMessage> out, String chat) {
        return out.stream().filter(m -> m.getChatId().equals(chat)).map(OutboundMessage::getId).toList();
    }

    private static List<String> expected(String prefix) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            ids.add(prefix + i);
        }
        return ids;
    }
}
