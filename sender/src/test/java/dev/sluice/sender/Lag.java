package dev.sluice.sender;

import dev.sluice.testkit.EmbeddedKafka;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

/** A consumer group's lag and a topic's record count, read with the admin client as an operator would. */
final class Lag {
    private Lag() {
    }

    /** Records of {@code topic} the group has not committed past (a partition never committed counts whole). */
    static long of(EmbeddedKafka kafka, String group, String topic) throws Exception {
        Map<TopicPartition, Long> end = endOffsets(kafka, topic);
        Map<TopicPartition, OffsetAndMetadata> committed = kafka.admin().listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
        long lag = 0;
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            OffsetAndMetadata c = committed.get(e.getKey());
            lag += e.getValue() - (c == null ? 0 : c.offset());
        }
        return lag;
    }

    /** Records written to {@code topic} (end offsets summed; the topic is never compacted or truncated here). */
    static long records(EmbeddedKafka kafka, String topic) throws Exception {
        return endOffsets(kafka, topic).values().stream().mapToLong(Long::longValue).sum();
    }

    private static Map<TopicPartition, Long> endOffsets(EmbeddedKafka kafka, String topic) throws Exception {
        TopicDescription d = kafka.admin().describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS)
                .get(topic);
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (TopicPartitionInfo p : d.partitions()) {
            latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest());
        }
        Map<TopicPartition, Long> out = new HashMap<>();
        kafka.admin().listOffsets(latest).all().get(10, TimeUnit.SECONDS).forEach((tp, info) -> out.put(tp, info.offset()));
        return out;
    }
}
