package dev.sluice.topology;

import static dev.sluice.topology.BrokerAndRegistry.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroDeserializer;
import dev.sluice.schemas.SpecificAvroSerializer;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21, scale: two topology instances on one broker (each its own state directory) share the tasks; the one
 * holding a pending digest and a scheduled post is killed with {@code kill -9} (a child JVM, no clean close); the
 * survivor takes its tasks over from the changelogs and both come out exactly once, the post not before its time.
 * The notifications are keyed by their chat id, so they take the direct path (no {@code by-chat} repartition).
 */
class TwoInstanceKillIT {
    private static final int PARTITIONS = 4;
    @RegisterExtension
    static final BrokerAndRegistry infra = new BrokerAndRegistry();

    @TempDir
    Path childStateDir;
    @TempDir
    Path survivorStateDir;
    @TempDir
    Path work;

    private Map<String, String> settings(Path stateDir, long flushIntervalMs) {
        Map<String, String> s = new HashMap<>(infra.settings("sluice-two-instance-it", stateDir).asMap());
        s.put("digest.flush.interval.ms", Long.toString(flushIntervalMs));
        s.put("schedule.release.interval.ms", "100");
        // The survivor notices the killed member after this, not after the 45 s default.
        s.put("kafka.session.timeout.ms", "6000");
        s.put("kafka.heartbeat.interval.ms", "1000");
        return s;
    }

    @Test
    void anInstanceKilledHoldingAPendingDigestAndAScheduledPostLeavesBothToTheSurvivorOnce() throws Exception {
        Topics topics = Topics.defaults();
        infra.ensureTopics(topics, PARTITIONS);
        CachedSchemaRegistryClient client = new CachedSchemaRegistryClient(infra.registry().url());
        SpecificAvroSerializer<Notification> avro = new SpecificAvroSerializer<>(client);

        // The child never flushes on its own (10 min): whatever it folds is pending when it dies.
        Path props = work.resolve("child.properties");
        Properties p = new Properties();
        p.putAll(settings(childStateDir, 600_000));
        try (Writer w = Files.newBufferedWriter(props)) {
            p.store(w, "TwoInstanceKillIT child");
        }
        Path log = work.resolve("child.log");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "-Xmx384m", "-cp", System.getProperty("java.class.path"),
                TopologyProcessMain.class.getName(), props.toString()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try (KafkaConsumer<String, OutboundMessage> outbox = infra.readCommitted("two-instance-it-outbox", new StringDeserializer(),
                new SpecificAvroDeserializer<>(client, OutboundMessage.class))) {
            outbox.subscribe(List.of(topics.outboxLive()));
            await().atMost(Duration.ofSeconds(120)).until(() -> Files.readString(log).contains("TOPOLOGY-RUNNING"));

            TopologyCounts survivorCounts = new TopologyCounts();
            try (TopologyService survivor = new TopologyService(TopologyConfig.from(Settings.of(settings(survivorStateDir, 2_000))),
                    new CachedSchemaRegistryClient(infra.registry().url()), survivorCounts)) {
                survivor.start();
                // Both run and share the tasks: the survivor holds some partitions of notifications, not all.
                await().atMost(Duration.ofSeconds(120)).until(() -> survivor.state() == KafkaStreams.State.RUNNING
                        && !ownedNotificationPartitions(survivor, topics).isEmpty()
                        && ownedNotificationPartitions(survivor, topics).size() < PARTITIONS);
                Set<Integer> survivorOwns = ownedNotificationPartitions(survivor, topics);
                // A chat whose partition the child holds (keyed by chat id: the producer's default partitioner puts it there).
                String chat = null;
                for (int c = 5001; chat == null; c++) {
                    int partition = BuiltInPartitioner.partitionForKey(utf8(Integer.toString(c)), PARTITIONS);
                    if (!survivorOwns.contains(partition)) {
                        chat = Integer.toString(c);
                    }
                }
                // Whole milliseconds, as the record carries it: a post released in the millisecond of its not_before has
                // due_at = that millisecond, which a sub-millisecond Instant.now() would be after. 40 s: room for a loaded
                // machine to commit the marker before the kill (checked below).
                Instant notBefore = Instant.now().plusSeconds(40).truncatedTo(ChronoUnit.MILLIS);
                try (KafkaProducer<byte[], byte[]> producer = infra.bytesProducer()) {
                    for (Notification n : List.of(
                            notification("d-1", chat, NotificationClass.COLLAPSIBLE, null),
                            notification("d-2", chat, NotificationClass.COLLAPSIBLE, null),
                            notification("post-1", chat, NotificationClass.CRITICAL, notBefore),
                            notification("marker", chat, NotificationClass.CRITICAL, null))) {
                        producer.send(new ProducerRecord<>(topics.notifications(), utf8(chat), avro.serialize(topics.notifications(), n))).get();
                    }
                }
                List<OutboundMessage> seen = new ArrayList<>();
                // The marker committed: the folds and the schedule entry before it (same partition) are committed too.
                await().atMost(Duration.ofSeconds(60)).until(() -> {
                    outbox.poll(Duration.ofMillis(200)).forEach(r -> seen.add(r.value()));
                    return seen.stream().anyMatch(m -> m.getId().equals("marker"));
                });
                assertThat(survivorCounts.get("live.sent.CRITICAL")).as("the child, not the survivor, routed the chat").isZero();
                assertThat(Instant.now()).as("the kill must come before the post is due, or this proves nothing").isBefore(notBefore);

                child.destroyForcibly().waitFor(); // SIGKILL: no close, no commit, no leave-group
                await().atMost(Duration.ofSeconds(120)).until(() -> {
                    outbox.poll(Duration.ofMillis(200)).forEach(r -> seen.add(r.value()));
                    return seen.stream().anyMatch(m -> m.getId().equals("post-1")) && seen.stream().anyMatch(m -> m.getDigestCount() > 0);
                });
                // Nothing more comes (exactly once), even after more flushes and releases.
                long until = System.currentTimeMillis() + 5_000;
                while (System.currentTimeMillis() < until) {
                    outbox.poll(Duration.ofMillis(200)).forEach(r -> seen.add(r.value()));
                }
                assertThat(ownedNotificationPartitions(survivor, topics)).as("the survivor took every task").hasSize(PARTITIONS);
                assertThat(seen).extracting(OutboundMessage::getId).hasSize(3).contains("marker", "post-1");
                OutboundMessage digest = seen.stream().filter(m -> m.getDigestCount() > 0).findFirst().orElseThrow();
                assertThat(digest.getFoldedIds()).containsExactly("d-1", "d-2");
                OutboundMessage post = seen.stream().filter(m -> m.getId().equals("post-1")).findFirst().orElseThrow();
                assertThat(post.getDueAt()).as("not before its time").isAfterOrEqualTo(notBefore);
                System.out.printf("two instances, kill -9: digest %s and post-1 (due %s, released %s) came out once from the survivor%n",
                        digest.getId(), notBefore, post.getDueAt());
            }
        } finally {
            child.destroyForcibly().waitFor();
        }
    }

    /** Partitions of {@code notifications} whose active task runs in {@code service}. */
    private static Set<Integer> ownedNotificationPartitions(TopologyService service, Topics topics) {
        return service.streams().metadataForLocalThreads().stream()
                .flatMap(t -> t.activeTasks().stream())
                .flatMap(task -> task.topicPartitions().stream())
                .filter(tp -> tp.topic().equals(topics.notifications()))
                .map(TopicPartition::partition)
                .collect(Collectors.toSet());
    }

    private static Notification notification(String id, String chat, NotificationClass eventClass, Instant notBefore) {
        return Notification.newBuilder().setId(id).setBotId("alerts").setChatId(chat).setKind("board.updated")
                .setEntity("board-7").setEventClass(eventClass).setText("Board 7: " + id).setCreatedAt(Instant.now())
                .setNotBefore(notBefore).build();
    }
}
