package dev.sluice.sender;


import dev.sluice.testkit.EmbeddedKafka;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

/**
 * Waits until freshly created topics have a leader that answers ListOffsets. Producing earlier made the
 * single embedded broker answer NOT_LEADER_OR_FOLLOWER and then OUT_OF_ORDER_SEQUENCE_NUMBER forever to
 * an idempotent producer (seen with Kafka 4.4.0).
 */
final class TopicsReady {
    private TopicsReady() {
    }

    static void await(EmbeddedKafka kafka, String... topics) {
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).ignoreExceptions().until(() -> {
            Map<String, TopicDescription> described = kafka.admin().describeTopics(List.of(topics))
                    .allTopicNames().get();
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            for (TopicDescription d : described.values()) {
                for (TopicPartitionInfo p : d.partitions()) {
                    if (p.leader() == null || p.leader().isEmpty()) {
                        return false;
                    }
                    latest.put(new TopicPartition(d.name(), p.partition()), OffsetSpec.latest());
                }
            }
            kafka.admin().listOffsets(latest).all().get();
            return true;
        });
    }
}
