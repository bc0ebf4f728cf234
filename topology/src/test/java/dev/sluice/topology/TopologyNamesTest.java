package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.config.Settings;
import dev.sluice.schemas.InMemorySchemaRegistryClient;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.streams.TopologyDescription;
import org.junit.jupiter.api.Test;

class TopologyNamesTest {

    @Test
    void everyNodeHasAStableKebabCaseName() {
        TopologyConfig config = TopologyConfig.from(Settings.of(Map.of(
                "bootstrap.servers", "unused:9092", "schema.registry.url", "http://unused:8081")));
        TopologyDescription description = SluiceTopology.build(config, new InMemorySchemaRegistryClient()).describe();

        Set<String> nodes = new TreeSet<>();
        Set<String> topics = new TreeSet<>();
        Set<String> stores = new TreeSet<>();
        for (TopologyDescription.Subtopology sub : description.subtopologies()) {
            for (TopologyDescription.Node node : sub.nodes()) {
                nodes.add(node.name());
                if (node instanceof TopologyDescription.Processor processor) {
                    stores.addAll(processor.stores());
                }
                if (node instanceof TopologyDescription.Source source) {
                    topics.addAll(source.topicSet());
                }
                if (node instanceof TopologyDescription.Sink sink) {
                    topics.add(sink.topic());
                }
            }
        }
        for (TopologyDescription.GlobalStore global : description.globalStores()) {
            nodes.add(global.source().name());
            nodes.add(global.processor().name());
            topics.addAll(global.source().topicSet());
            stores.addAll(global.processor().stores());
        }

        Set<String> expected = new TreeSet<>();
        for (String p : new String[] {"live", "backfill"}) {
            String repartition = p.equals("live") ? "by-chat" : "backfill-by-chat";
            // issue 21 session 9: validate and route forward to named children; the split, branch, map, mapValues and
            // flatMapValues nodes between them (checked*, dlq-original, dlq-has-result, dlq-result, by-chat-path*, direct-key,
            // key-by-chat, by-chat-merge, routed*, to-*, address*, split-parts) are gone, their work done inside validate and route
            for (String step : new String[] {"source", "validate", "dlq-sink", "dlq-results-sink", "route", "outbox-sink",
                    "results-sink"}) {
                expected.add(p + "-" + step);
            }
            expected.add(repartition + "-repartition-filter");
            expected.add(repartition + "-repartition-sink");
            expected.add(repartition + "-repartition-source");
        }
        expected.addAll(Set.of("chat-events-source", "chat-events-to-status", "delivery-results-source", "delivery-results-to-status",
                "delivery-results-to-message-ids", "delivery-parts-source", "delivery-parts-aggregate", "delivery-parts-results-sink",
                "sender-status-source", "sender-status", "preferences-source", "preferences"));
        assertThat(nodes).isEqualTo(expected);
        // issue 21 session 11: <p>-dedupe-batches (the ids in batches, one changelog record per batch and commit) beside
        // <p>-dedupe-store (the previous version's per-id store, still read at init and written past the filter's bound)
        assertThat(stores).containsExactlyInAnyOrder("chat-status-store", "chat-policy-store", "live-digest-store",
                "live-schedule-store", "backfill-digest-store", "backfill-schedule-store", "live-dedupe-store", "backfill-dedupe-store",
                "live-dedupe-batches", "backfill-dedupe-batches", "sender-status-store", "preferences-store",
                "provider-message-id-store", "live-edit-wait-store", "backfill-edit-wait-store", "part-results-store");
        for (String node : nodes) {
            assertThat(node).as("kebab-case, never generated (KSTREAM-...)").matches("[a-z]+(-[a-z]+)*");
        }
        assertThat(topics).contains("notifications", "notifications.backfill", "outbox.live", "outbox.backfill",
                "notifications.dlq", "by-chat-repartition", "backfill-by-chat-repartition", "chat.events", "delivery.results", "delivery.parts",
                "sender.status", "preferences");

        Matcher generated = Pattern.compile("KSTREAM-|KTABLE-|KSTREAM_").matcher(description.toString());
        assertThat(generated.find()).as(description.toString()).isFalse();
    }

    /** Issue 21 session 9: a notification keyed by its chat passes 4 nodes, each forwarding to the one child it names. */
    @Test
    void theValidPathIsFourNodesFromSourceToOutbox() {
        TopologyConfig config = TopologyConfig.from(Settings.of(Map.of(
                "bootstrap.servers", "unused:9092", "schema.registry.url", "http://unused:8081")));
        TopologyDescription description = SluiceTopology.build(config, new InMemorySchemaRegistryClient()).describe();
        Map<String, Set<String>> successors = new java.util.HashMap<>();
        for (TopologyDescription.Subtopology sub : description.subtopologies()) {
            for (TopologyDescription.Node node : sub.nodes()) {
                Set<String> next = new TreeSet<>();
                node.successors().forEach(n -> next.add(n.name()));
                successors.put(node.name(), next);
            }
        }
        for (String p : new String[] {"live", "backfill"}) {
            String repartition = p.equals("live") ? "by-chat" : "backfill-by-chat";
            assertThat(successors.get(p + "-source")).containsExactly(p + "-validate");
            assertThat(successors.get(p + "-validate")).containsExactlyInAnyOrder(p + "-dlq-sink", p + "-dlq-results-sink",
                    repartition + "-repartition-filter", p + "-route");
            assertThat(successors.get(repartition + "-repartition-source")).containsExactly(p + "-route");
            assertThat(successors.get(p + "-route")).containsExactlyInAnyOrder(p + "-outbox-sink", p + "-results-sink");
        }
    }
}
