package dev.sluice.topology;

import static dev.sluice.topology.BrokerAndRegistry.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Lane;
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
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The digest and schedule stores survive a restart on a real (embedded KRaft) broker with exactly_once_v2:
 * a digest pending when the application stops comes out after the restart, once; a scheduled post due after
 * the stop comes out after the restart, not before its time, once. A migration learned before the stop (from a
 * result keyed by the old chat id, as the fixed sender writes it) still re-addresses after the restart, and an id
 * seen before the stop is still a duplicate after it (the dedupe window store comes back from its changelog).
 */
class RestartIT {
    @RegisterExtension
    static final BrokerAndRegistry infra = new BrokerAndRegistry();

    @TempDir
    Path stateDir;
    @TempDir
    Path otherStateDir;

    private TopologyConfig config(Path stateDir, long flushIntervalMs) {
        return TopologyConfig.from(infra.settings("sluice-topology-restart-it", stateDir)
                .with("digest.flush.interval.ms", Long.toString(flushIntervalMs))
                .with("schedule.release.interval.ms", "100"));
    }

    @Test
    void aPendingDigestAndAScheduledPostComeOutAfterARestartOnce() throws Exception {
        Topics topics = Topics.defaults();
        infra.ensureTopics(topics, 2);
        CachedSchemaRegistryClient client = new CachedSchemaRegistryClient(infra.registry().url());
        SpecificAvroSerializer<Notification> avro = new SpecificAvroSerializer<>(client);
        SpecificAvroDeserializer<OutboundMessage> outbound = new SpecificAvroDeserializer<>(client, OutboundMessage.class);

        try (KafkaConsumer<String, OutboundMessage> outbox = infra.readCommitted("restart-it-outbox", new StringDeserializer(), outbound)) {
            outbox.subscribe(List.of(topics.outboxLive()));
            List<OutboundMessage> seen = new ArrayList<>();
            Instant notBefore;

            SpecificAvroSerializer<DeliveryResult> resultAvro = new SpecificAvroSerializer<>(client);
            // Run 1: the flush interval (10 min) is far away, so the digest is still pending at the stop.
            try (TopologyService first = new TopologyService(config(stateDir, 600_000))) {
                first.start();
                BrokerAndRegistry.awaitRunning(first);
                notBefore = Instant.now().plusSeconds(12).truncatedTo(ChronoUnit.MILLIS); // what not_before carries
                try (KafkaProducer<byte[], byte[]> producer = infra.bytesProducer()) {
                    // One producer key: one source partition, so "marker" is processed after the others.
                    for (Notification n : List.of(
                            notification("d-1", NotificationClass.COLLAPSIBLE, null),
                            notification("d-2", NotificationClass.COLLAPSIBLE, null),
                            notification("post-1", NotificationClass.CRITICAL, notBefore),
                            notification("marker", NotificationClass.CRITICAL, null))) {
                        producer.send(new ProducerRecord<>(topics.notifications(), utf8("user-1"), avro.serialize(topics.notifications(), n))).get();
                    }
                    // A sender learned from a 400 that group -4001 migrated: the result keyed by the old id.
                    DeliveryResult migrated = DeliveryResult.newBuilder().setMessageId("m-0").setBotId("alerts").setChatId("-4001")
                            .setStatus(DeliveryStatus.DELIVERED).setEventClass(NotificationClass.CRITICAL).setLane(Lane.LIVE)
                            .setAttempts(2).setResultAt(Instant.now()).setMigratedToChatId("-1004001").setSenderInstance("sender-1").build();
                    producer.send(new ProducerRecord<>(topics.deliveryResults(), utf8("-4001"),
                            resultAvro.serialize(topics.deliveryResults(), migrated))).get();
                    producer.send(new ProducerRecord<>(topics.notifications(), utf8("-4001"),
                            avro.serialize(topics.notifications(), notification("mig-1", "-4001", NotificationClass.CRITICAL)))).get();
                }
                // The marker committed means the folds and the schedule entry before it are committed too.
                await().atMost(Duration.ofSeconds(60)).until(() -> {
                    outbox.poll(Duration.ofMillis(200)).forEach(r -> seen.add(r.value()));
                    return seen.stream().anyMatch(m -> m.getId().equals("marker")) && seen.stream().anyMatch(m -> m.getId().equals("mig-1"));
                });
            }
            assertThat(seen).extracting(OutboundMessage::getId).containsExactlyInAnyOrder("marker", "mig-1");
            assertThat(seen).filteredOn(m -> m.getId().equals("mig-1")).extracting(OutboundMessage::getChatId).containsExactly("-1004001");
            assertThat(Instant.now()).as("the stop must come before the post is due, or this proves nothing").isBefore(notBefore);

            // Run 2: same application id, flush every 2 s, and an empty state dir (another machine): the stores
            // come back from their changelogs.
            TopologyCounts secondCounts = new TopologyCounts();
            try (TopologyService second = new TopologyService(config(otherStateDir, 2_000), new CachedSchemaRegistryClient(infra.registry().url()),
                    secondCounts)) {
                second.start();
                try (KafkaProducer<byte[], byte[]> producer = infra.bytesProducer()) {
                    // The marker again (a producer retry after the restart): a duplicate. And a new one to the old group id.
                    producer.send(new ProducerRecord<>(topics.notifications(), utf8("user-1"), avro.serialize(topics.notifications(),
                            notification("marker", NotificationClass.CRITICAL, null)))).get();
                    producer.send(new ProducerRecord<>(topics.notifications(), utf8("-4001"),
                            avro.serialize(topics.notifications(), notification("mig-2", "-4001", NotificationClass.CRITICAL)))).get();
                }
                await().atMost(Duration.ofSeconds(60)).until(() -> {
                    outbox.poll(Duration.ofMillis(200)).forEach(r -> seen.add(r.value()));
                    return seen.size() >= 5 && secondCounts.get("live.duplicates") == 1;
                });
                // Nothing more comes (exactly once), even after more flushes and releases.
                long until = System.currentTimeMillis() + 5_000;
                while (System.currentTimeMillis() < until) {
                    outbox.poll(Duration.ofMillis(200)).forEach(r -> seen.add(r.value()));
                }
            }
            assertThat(seen).extracting(OutboundMessage::getId).hasSize(5).contains("marker", "mig-1", "post-1", "mig-2");
            assertThat(seen).filteredOn(m -> m.getId().equals("mig-2")).extracting(OutboundMessage::getChatId)
                    .as("re-addressed after the restart").containsExactly("-1004001");
            OutboundMessage digest = seen.stream().filter(m -> m.getDigestCount() > 0).findFirst().orElseThrow();
            assertThat(digest.getId()).startsWith("live-digest-");
            assertThat(digest.getFoldedIds()).containsExactly("d-1", "d-2");
            OutboundMessage post = seen.stream().filter(m -> m.getId().equals("post-1")).findFirst().orElseThrow();
            assertThat(post.getDueAt()).as("not before its time").isAfterOrEqualTo(notBefore);
            System.out.printf("restart: post due %s released %s (%d ms late)%n", notBefore, post.getDueAt(),
                    post.getDueAt().toEpochMilli() - notBefore.toEpochMilli());
            assertThat(post.getDueAt()).as("within 1 s after its time").isBefore(notBefore.plusSeconds(1));
        }
    }

    private static Notification notification(String id, String chat, NotificationClass eventClass) {
        return Notification.newBuilder(notification(id, eventClass, null)).setChatId(chat).build();
    }

    private static Notification notification(String id, NotificationClass eventClass, Instant notBefore) {
        return Notification.newBuilder().setId(id).setBotId("alerts").setChatId("1001").setKind("board.updated")
                .setEntity("board-7").setEventClass(eventClass).setText("Board 7: " + id).setCreatedAt(Instant.now())
                .setNotBefore(notBefore).build();
    }
}
