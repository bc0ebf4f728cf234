package dev.sluice.app;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.common.TopicPartition;

/**
 * Finds another Sluice pipeline already reading the topology's input: a Kafka Streams application (its members' client
 * ids end in {@code -StreamThread-N-consumer}) under another {@code application.id} whose members are assigned partitions
 * of {@code notifications} or {@code notifications.backfill}. A second application id reads every notification again
 * (its own consumer group) and writes it to the outbox again: each one would be sent twice (a {@code sluice topology -c}
 * pointed at the config file of a running {@code sluice dev}). An instance under the same application id is a scale-out
 * and not reported. Classic-protocol groups only (Sluice's default); a call the broker refuses (ACLs) is the caller's to
 * report.
 */
final class OtherPipelines {
    /** One other application: its group id, its members' client ids and hosts, and the input partitions they hold. */
    record Pipeline(String groupId, List<String> members, List<String> partitions) {
        @Override
        public String toString() {
            return "application.id '" + groupId + "' (" + members.size() + " stream thread(s), first " + members.get(0)
                    + "; holding " + partitions.size() + " partition(s) of " + String.join(", ", new TreeSet<>(
                    partitions.stream().map(p -> p.substring(0, p.lastIndexOf('-'))).toList())) + ")";
        }
    }

    private OtherPipelines() {
    }

    /**
     * @param timeout for each Admin call
     * @throws Exception when a call fails or times out (the caller reports it)
     */
    static List<Pipeline> find(Map<String, Object> adminProps, String ownApplicationId, Collection<String> inputTopics,
                               Duration timeout) throws Exception {
        Admin admin = Admin.create(adminProps);
        try {
            List<String> groups = new ArrayList<>();
            for (GroupListing g : admin.listGroups(ListGroupsOptions.forConsumerGroups()).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                if (!g.groupId().equals(ownApplicationId)) {
                    groups.add(g.groupId());
                }
            }
            if (groups.isEmpty()) {
                return List.of();
            }
            Map<String, ConsumerGroupDescription> described = admin.describeConsumerGroups(groups).all()
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            List<Pipeline> out = new ArrayList<>();
            for (ConsumerGroupDescription d : described.values()) {
                List<String> members = new ArrayList<>();
                TreeSet<String> partitions = new TreeSet<>();
                for (MemberDescription m : d.members()) {
                    boolean streams = m.clientId().matches(".*-StreamThread-\\d+-consumer");
                    List<String> held = m.assignment().topicPartitions().stream()
                            .filter(tp -> inputTopics.contains(tp.topic())).map(TopicPartition::toString).toList();
                    if (streams && !held.isEmpty()) {
                        members.add(m.clientId() + " on " + m.host());
                        partitions.addAll(held);
                    }
                }
                if (!members.isEmpty()) {
                    out.add(new Pipeline(d.groupId(), members, List.copyOf(partitions)));
                }
            }
            return out;
        } finally {
            admin.close(Duration.ofSeconds(1)); // not the default wait for pending calls (up to default.api.timeout.ms)
        }
    }
}
