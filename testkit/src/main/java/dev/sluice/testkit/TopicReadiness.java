package dev.sluice.testkit;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;

/**
 * Waits, after a topic's creation was acknowledged, until every partition has a leader that answers ListOffsets: a
 * leader named before its log exists fails the first produce, whose retries then fail OUT_OF_ORDER_SEQUENCE_NUMBER until
 * the delivery timeout (KafkaResultLookupIT). Bounded by 30 s; polls every 20 ms. Stateless.
 */
final class TopicReadiness {
    private TopicReadiness() {
    }

    static void await(Admin admin, List<String> names) throws InterruptedException, TimeoutException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        Exception last = null;
        while (System.nanoTime() < deadline) {
            try {
                Map<String, TopicDescription> described =
                        admin.describeTopics(names).allTopicNames().get(5, TimeUnit.SECONDS);
                boolean ready = described.values().stream()
                        .flatMap(d -> d.partitions().stream())
                        .allMatch(p -> p.leader() != null && !p.leader().isEmpty());
                if (ready && admin.listTopics().names().get(5, TimeUnit.SECONDS).containsAll(names)) {
                    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
                    described.values().forEach(d -> d.partitions().forEach(
                            p -> latest.put(new TopicPartition(d.name(), p.partition()), OffsetSpec.latest())));
                    admin.listOffsets(latest).all().get(5, TimeUnit.SECONDS);
                    return;
                }
            } catch (ExecutionException | TimeoutException e) {
                last = e; // not visible or not writable yet: try again until the deadline
            }
            Thread.sleep(20);
        }
        TimeoutException timeout = new TimeoutException("topics " + names
                + " have no leader answering ListOffsets after 30 s" + (last == null ? "" : ": " + last));
        timeout.initCause(last);
        throw timeout;
    }
}
