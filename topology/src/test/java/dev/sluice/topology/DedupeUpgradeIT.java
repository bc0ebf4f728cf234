package dev.sluice.topology;

import static dev.sluice.topology.BrokerAndRegistry.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.config.Topics;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroDeserializer;
import dev.sluice.schemas.SpecificAvroSerializer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.processor.api.ContextualProcessor;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21, the dedupe store's upgrade on a real (embedded KRaft) broker with exactly_once_v2: ids the previous version
 * remembered in {@code live-dedupe-store} (one window-store record per id, written by Kafka Streams to its changelog) are
 * still duplicates for the version that keeps its ids in batches ({@code live-dedupe-batches}), after a restore from the
 * changelog into an empty state dir.
 */
class DedupeUpgradeIT {
    @RegisterExtension
    static final BrokerAndRegistry infra = new BrokerAndRegistry();
    private static final String APP = "sluice-dedupe-upgrade-it";

    @TempDir
    Path oldStateDir;
    @TempDir
    Path newStateDir;

    /**
     * The previous version's dedupe write, as its SluiceTopology declared the store and its RouteProcessor wrote it:
     * {@code Stores.persistentWindowStore("<lane>-dedupe-store", window, 1 ms, false)}, String/Long serdes, logged,
     * {@code store.put(id, now, now)} per new notification of the lane, in the task of the notification's chat partition.
     */
    private static final class PreviousVersionDedupe extends ContextualProcessor<byte[], byte[], Void, Void> {
        private final SpecificAvroDeserializer<Notification> avro;
        private final AtomicInteger remembered;
        private WindowStore<String, Long> store;

        PreviousVersionDedupe(SpecificAvroDeserializer<Notification> avro, AtomicInteger remembered) {
            this.avro = avro;
            this.remembered = remembered;
        }

        @Override
        public void init(org.apache.kafka.streams.processor.api.ProcessorContext<Void, Void> context) {
            super.init(context);
            store = context.getStateStore("live-dedupe-store");
        }

        @Override
        public void process(Record<byte[], byte[]> record) {
            Notification n = avro.deserialize("notifications", record.value());
            long now = context().currentSystemTimeMs();
            store.put(RouteDedupe.legacyKey(n), now, now); // its key: the id, no chat
            remembered.incrementAndGet();
        }
    }

    @Test
    void anIdThePreviousVersionRememberedIsADuplicateAfterTheUpgrade() throws Exception {
        Topics topics = Topics.defaults();
        infra.ensureTopics(topics, 2);
        CachedSchemaRegistryClient client = new CachedSchemaRegistryClient(infra.registry().url());
        SpecificAvroSerializer<Notification> avro = new SpecificAvroSerializer<>(client);
        // A closed Kafka Streams client does not leave its group: run 2's first rebalance waits for run 1's member to time
        // out, 6 s here instead of the 45 s default.
        TopologyConfig oldConfig = TopologyConfig.from(infra.settings(APP, oldStateDir)
                .with("kafka.session.timeout.ms", "6000").with("kafka.heartbeat.interval.ms", "1000"));

        // Run 1: the previous version's dedupe store, same application id (so the same changelog topic).
        AtomicInteger remembered = new AtomicInteger();
        StreamsBuilder builder = new StreamsBuilder();
        builder.addStateStore(Stores.windowStoreBuilder(Stores.persistentWindowStore("live-dedupe-store",
                Duration.ofMillis(oldConfig.dedupeWindowMs()), Duration.ofMillis(1), false), Serdes.String(), Serdes.Long()));
        builder.stream(topics.notifications(), Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                .process(() -> new PreviousVersionDedupe(new SpecificAvroDeserializer<>(client, Notification.class), remembered),
                        "live-dedupe-store");
        try (KafkaProducer<byte[], byte[]> producer = infra.bytesProducer();
             KafkaStreams previous = new KafkaStreams(builder.build(), oldConfig.streamsProperties())) {
            previous.start();
            // keyed by the chat id: the same partition (and so the same changelog partition) as the new topology's route task
            producer.send(new ProducerRecord<>(topics.notifications(), utf8("1001"),
                    avro.serialize(topics.notifications(), notification("up-1")))).get();
            await().atMost(Duration.ofSeconds(60)).until(() -> remembered.get() == 1);
            previous.close(Duration.ofSeconds(30)); // a clean close commits the transaction with the changelog record
        }

        // Run 2: the new version, empty state dir: live-dedupe-store comes back from its changelog.
        TopologyCounts counts = new TopologyCounts();
        SpecificAvroDeserializer<OutboundMessage> outbound = new SpecificAvroDeserializer<>(client, OutboundMessage.class);
        try (KafkaConsumer<String, OutboundMessage> outbox = infra.readCommitted("upgrade-it-outbox", new StringDeserializer(), outbound);
             TopologyService next = new TopologyService(TopologyConfig.from(infra.settings(APP, newStateDir)),
                     new CachedSchemaRegistryClient(infra.registry().url()), counts)) {
            outbox.subscribe(List.of(topics.outboxLive()));
            next.start();
            BrokerAndRegistry.awaitRunning(next);
            try (KafkaProducer<byte[], byte[]> producer = infra.bytesProducer()) {
                producer.send(new ProducerRecord<>(topics.notifications(), utf8("1001"),
                        avro.serialize(topics.notifications(), notification("up-1")))).get(); // a retry after the upgrade
                producer.send(new ProducerRecord<>(topics.notifications(), utf8("1001"),
                        avro.serialize(topics.notifications(), notification("up-2")))).get();
                producer.send(new ProducerRecord<>(topics.notifications(), utf8("1001"),
                        avro.serialize(topics.notifications(), notification("up-2")))).get(); // and one of the new version's
            }
            List<String> seen = new ArrayList<>();
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                outbox.poll(Duration.ofMillis(200)).forEach(r -> seen.add(r.value().getId()));
                return seen.contains("up-2") && counts.get("live.duplicates") == 2;
            });
            long until = System.currentTimeMillis() + 2_000; // nothing more comes
            while (System.currentTimeMillis() < until) {
                outbox.poll(Duration.ofMillis(200)).forEach(r -> seen.add(r.value().getId()));
            }
            assertThat(seen).containsExactly("up-2");
            assertThat(counts.get("live.duplicates")).isEqualTo(2);
        }
    }

    private static Notification notification(String id) {
        return Notification.newBuilder().setId(id).setBotId("alerts").setChatId("1001").setKind("board.updated")
                .setEntity("board-7").setEventClass(NotificationClass.CRITICAL).setText("Board 7: " + id)
                .setCreatedAt(Instant.now()).build();
    }
}
