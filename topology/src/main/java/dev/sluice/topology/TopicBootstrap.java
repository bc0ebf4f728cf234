package dev.sluice.topology;

import dev.sluice.config.Topics;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;

/**
 * Creates Sluice's topics when they are missing (for the demo, tests and simple deployments; production
 * usually creates topics through its own tooling). Topics in {@link Topics#compacted()} get
 * {@code cleanup.policy=compact}. Existing topics are left as they are. Internal topics of Kafka Streams
 * (repartition, changelog) are created by Kafka Streams itself.
 */
public final class TopicBootstrap {
    private static final long TIMEOUT_SECONDS = 30;

    private TopicBootstrap() {
    }

    /**
     * @return the topics that were created (empty when all existed)
     * @throws IllegalStateException when the broker cannot be reached or refuses, naming the cause
     */
    public static List<String> ensureTopics(Admin admin, Topics topics, int partitions, short replicationFactor) {
        try {
            Set<String> existing = admin.listTopics().names().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            List<NewTopic> missing = new ArrayList<>();
            for (String name : topics.all()) {
                if (existing.contains(name) || missing.stream().anyMatch(t -> t.name().equals(name))) {
                    continue;
                }
                NewTopic topic = new NewTopic(name, partitions, replicationFactor);
                if (topics.compacted().contains(name)) {
                    topic.configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT));
                }
                missing.add(topic);
            }
            List<String> created = new ArrayList<>();
            var result = admin.createTopics(missing);
            for (NewTopic t : missing) {
                try {
                    result.values().get(t.name()).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
                    created.add(t.name());
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) { // created meanwhile by someone else: fine
                        throw new IllegalStateException("cannot create topic " + t.name() + ": " + e.getCause(), e.getCause());
                    }
                }
            }
            awaitVisible(admin, created);
            return created;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topics", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot list topics: " + (e.getCause() != null ? e.getCause() : e), e);
        }
    }

    /**
     * Checks that the topics read in the chat-keyed task share one partition count: {@code notifications},
     * {@code notifications.backfill} (the repartitions inherit their counts), {@code chat.events} and
     * {@code delivery.results}. Otherwise a chat's status would live in another task than its notifications and
     * Kafka Streams would not notice. Topics that do not exist yet are not checked (Kafka Streams reports them).
     *
     * @return the partition count of each of those topics that exists
     * @throws IllegalStateException naming every topic and its partition count when they differ
     */
    public static Map<String, Integer> checkCoPartitioned(Admin admin, Topics topics) {
        List<String> names = List.of(topics.notifications(), topics.notificationsBackfill(), topics.chatEvents(), topics.deliveryResults());
        try {
            Set<String> existing = admin.listTopics().names().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            List<String> present = names.stream().filter(existing::contains).distinct().toList();
            if (present.isEmpty()) {
                return Map.of();
            }
            Map<String, Integer> counts = new java.util.TreeMap<>();
            admin.describeTopics(present).allTopicNames().get(TIMEOUT_SECONDS, TimeUnit.SECONDS)
                    .forEach((name, d) -> counts.put(name, d.partitions().size()));
            if (counts.values().stream().distinct().count() > 1) {
                throw new IllegalStateException("topics read by chat id must have the same number of partitions "
                        + "(chat status is kept next to the notifications of the chat), found " + counts);
            }
            return counts;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while describing topics", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot describe topics: " + (e.getCause() != null ? e.getCause() : e), e);
        }
    }

    /**
     * Waits (at most {@value #TIMEOUT_SECONDS} s) until the brokers' metadata shows every created topic with a leader for
     * each partition: a create returns once the controller has it, and a client that uses the topic at once (a describe, a
     * global store's partition lookup) could still be told it does not exist.
     */
    private static void awaitVisible(Admin admin, List<String> created) throws InterruptedException, TimeoutException {
        if (created.isEmpty()) {
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        while (true) {
            try {
                boolean ready = admin.describeTopics(created).allTopicNames().get(TIMEOUT_SECONDS, TimeUnit.SECONDS).values().stream()
                        .allMatch(d -> !d.partitions().isEmpty() && d.partitions().stream().allMatch(p -> p.leader() != null));
                if (ready) {
                    return;
                }
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException)) {
                    throw new IllegalStateException("cannot describe the created topics: " + e.getCause(), e.getCause());
                }
            }
            if (System.nanoTime() > deadline) {
                throw new TimeoutException("created topics " + created + " not visible in the brokers' metadata within "
                        + TIMEOUT_SECONDS + " s");
            }
            Thread.sleep(50); // polling the metadata; bounded by the deadline above
        }
    }
}
