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
            return created;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topics", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot list topics: " + (e.getCause() != null ? e.getCause() : e), e);
        }
    }
}
