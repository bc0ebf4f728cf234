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
        for (TopologyDescription.Subtopology sub : description.subtopologies()) {
            for (TopologyDescription.Node node : sub.nodes()) {
                nodes.add(node.name());
                if (node instanceof TopologyDescription.Source source) {
                    topics.addAll(source.topicSet());
                }
                if (node instanceof TopologyDescription.Sink sink) {
                    topics.add(sink.topic());
                }
            }
        }
        assertThat(description.globalStores()).isEmpty();

        Set<String> expected = new TreeSet<>();
        for (String p : new String[] {"live", "backfill"}) {
            String repartition = p.equals("live") ? "by-chat" : "backfill-by-chat";
            for (String step : new String[] {"source", "validate", "checked", "checked-valid", "checked-invalid",
                    "dlq-original", "dlq-sink", "key-by-chat", "to-outbound", "outbox-sink"}) {
                expected.add(p + "-" + step);
            }
            expected.add(repartition + "-repartition-filter");
            expected.add(repartition + "-repartition-sink");
            expected.add(repartition + "-repartition-source");
        }
        assertThat(nodes).isEqualTo(expected);
        for (String node : nodes) {
            assertThat(node).as("kebab-case, never generated (KSTREAM-...)").matches("[a-z]+(-[a-z]+)*");
        }
        assertThat(topics).contains("notifications", "notifications.backfill", "outbox.live", "outbox.backfill",
                "notifications.dlq", "by-chat-repartition", "backfill-by-chat-repartition");

        Matcher generated = Pattern.compile("KSTREAM-|KTABLE-|KSTREAM_").matcher(description.toString());
        assertThat(generated.find()).as(description.toString()).isFalse();
    }
}
