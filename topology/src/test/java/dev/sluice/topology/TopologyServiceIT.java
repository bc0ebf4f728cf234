package dev.sluice.topology;

import static dev.sluice.topology.BrokerAndRegistry.utf8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.Lane;
import dev.sluice.avro.Notification;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.config.Topics;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroDeserializer;
import dev.sluice.schemas.SpecificAvroSerializer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The topology on a real (embedded KRaft) broker with exactly_once_v2 and the HTTP schema registry. */
class TopologyServiceIT {
    @RegisterExtension
    static final BrokerAndRegistry infra = new BrokerAndRegistry();

    @TempDir
    Path stateDir;

    @Test
    void createsTopicsThenDeadLettersBadRecordsAndKeepsPerChatOrderOnARealBroker() throws Exception {
        Topics topics = Topics.defaults();
        try (Admin admin = infra.admin()) {
            assertThat(TopicBootstrap.ensureTopics(admin, topics, 3, (short) 1)).containsExactlyInAnyOrderElementsOf(topics.all());
            assertThat(TopicBootstrap.ensureTopics(admin, topics, 3, (short) 1)).as("idempotent").isEmpty();
            ConfigResource status = new ConfigResource(ConfigResource.Type.TOPIC, topics.senderStatus());
            Config config = admin.describeConfigs(List.of(status)).all().get().get(status);
            assertThat(config.get("cleanup.policy").value()).isEqualTo("compact");
            ConfigResource outbox = new ConfigResource(ConfigResource.Type.TOPIC, topics.outboxLive());
            assertThat(admin.describeConfigs(List.of(outbox)).all().get().get(outbox).get("cleanup.policy").value()).isEqualTo("delete");
        }

        TopologyConfig config = TopologyConfig.from(infra.settings("sluice-topology-it", stateDir));
        CachedSchemaRegistryClient client = new CachedSchemaRegistryClient(infra.registry().url());
        try (TopologyService service = new TopologyService(config)) {
            service.start();
            BrokerAndRegistry.awaitRunning(service);

            Map<String, List<String>> sentByChat = new LinkedHashMap<>();
            try (KafkaProducer<byte[], byte[]> producer = infra.bytesProducer()) {
                SpecificAvroSerializer<Notification> avro = new SpecificAvroSerializer<>(client);
                producer.send(new ProducerRecord<>(topics.notifications(), utf8("k-bad"), utf8("{\"not\":\"avro\"}")));
                producer.send(new ProducerRecord<>(topics.notifications(), utf8("k-nochat"),
                        avro.serialize(topics.notifications(), notification("n-nochat", null))));
                for (int i = 0; i < 30; i++) {
                    String chat = List.of("1001", "1002", "-100300").get(i % 3);
                    sentByChat.computeIfAbsent(chat, c -> new ArrayList<>()).add("n-" + i);
                    // Keyed by user, not chat: the topology re-keys. Order is defined per source partition, so
                    // one chat's notifications come from one producer key here.
                    producer.send(new ProducerRecord<>(topics.notifications(), utf8("user-of-" + chat),
                            avro.serialize(topics.notifications(), notification("n-" + i, chat))));
                }
                producer.send(new ProducerRecord<>(topics.notificationsBackfill(), utf8("b"),
                        avro.serialize(topics.notificationsBackfill(), notification("b-1", "1001"))));
            }

            SpecificAvroDeserializer<OutboundMessage> outbound = new SpecificAvroDeserializer<>(client, OutboundMessage.class);
            List<ConsumerRecord<String, OutboundMessage>> live = consume(topics.outboxLive(), new StringDeserializer(), outbound, 30);
            Map<String, List<String>> receivedByChat = new LinkedHashMap<>();
            for (ConsumerRecord<String, OutboundMessage> r : live) {
                assertThat(r.key()).isEqualTo(r.value().getChatId());
                assertThat(r.value().getLane()).isEqualTo(Lane.LIVE);
                receivedByChat.computeIfAbsent(r.key(), c -> new ArrayList<>()).add(r.value().getId());
            }
            assertThat(receivedByChat).isEqualTo(sentByChat);

            List<ConsumerRecord<String, OutboundMessage>> backfill = consume(topics.outboxBackfill(), new StringDeserializer(), outbound, 1);
            assertThat(backfill.get(0).value().getLane()).isEqualTo(Lane.BACKFILL);

            List<ConsumerRecord<byte[], byte[]>> dead = consume(topics.dlq(), new ByteArrayDeserializer(), new ByteArrayDeserializer(), 2);
            List<String> reasons = dead.stream().map(r -> new String(r.headers().lastHeader(DeadLetterHeaders.REASON).value(),
                    StandardCharsets.UTF_8)).toList();
            assertThat(reasons).anyMatch(r -> r.startsWith("not Confluent wire format: magic byte 0x7b"));
            assertThat(reasons).contains("field chat_id is missing (null)");
            assertThat(dead).extracting(r -> new String(r.key(), StandardCharsets.UTF_8)).containsExactlyInAnyOrder("k-bad", "k-nochat");
        }
    }

    @Test
    void aShortRegistryOutageIsRetriedInPlaceAndTheRecordIsProcessedNotDeadLettered() throws Exception {
        TopologyConfig config = TopologyConfig.from(BrokerAndRegistry.withTopicPrefix(
                infra.settings("sluice-topology-outage-it", stateDir), "outage"));
        Topics topics = config.topics();
        infra.ensureTopics(topics, 1);
        CachedSchemaRegistryClient client = new CachedSchemaRegistryClient(infra.registry().url());
        byte[] valid = new SpecificAvroSerializer<Notification>(client).serialize(topics.notifications(), notification("n-outage", "2001"));

        try (TopologyService service = new TopologyService(config)) { // its own client: nothing cached yet
            service.start();
            BrokerAndRegistry.awaitRunning(service);
            infra.registry().failNextRequests(3, 503);
            try (KafkaProducer<byte[], byte[]> producer = infra.bytesProducer()) {
                producer.send(new ProducerRecord<>(topics.notifications(), utf8("k"), valid)).get();
            }
            SpecificAvroDeserializer<OutboundMessage> outbound = new SpecificAvroDeserializer<>(client, OutboundMessage.class);
            List<ConsumerRecord<String, OutboundMessage>> out = consume(topics.outboxLive(), new StringDeserializer(), outbound, 1);
            assertThat(out.get(0).value().getId()).isEqualTo("n-outage");
            try (KafkaConsumer<byte[], byte[]> dlq = new KafkaConsumer<>(Map.of(
                    ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, infra.bootstrapServers(),
                    ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                    ConsumerConfig.GROUP_ID_CONFIG, "it-outage-dlq"), new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                dlq.subscribe(List.of(topics.dlq()));
                assertThat(dlq.poll(Duration.ofSeconds(2)).isEmpty()).as("an outage is not the record's fault").isTrue();
            }
            assertThat(service.state()).isEqualTo(KafkaStreams.State.RUNNING);
            // Awaitility fails the awaits above on any uncaught exception, so no stream thread died either.
        }
    }

    @Test
    void refusesToStartWhenChatEventsAreNotCoPartitionedWithNotifications() throws Exception {
        TopologyConfig config = TopologyConfig.from(BrokerAndRegistry.withTopicPrefix(
                infra.settings("sluice-topology-copart-it", stateDir), "copart"));
        try (Admin admin = infra.admin()) {
            admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic(config.topics().chatEvents(), 2, (short) 1))).all().get();
            TopicBootstrap.ensureTopics(admin, config.topics(), 3, (short) 1);
        }
        try (TopologyService service = new TopologyService(config)) {
            org.assertj.core.api.Assertions.assertThatThrownBy(service::start).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("same number of partitions").hasMessageContaining("copart.chat.events=2")
                    .hasMessageContaining("copart.notifications=3");
        }
    }

    private static <K, V> List<ConsumerRecord<K, V>> consume(String topic, Deserializer<K> keys, Deserializer<V> values, int expected) {
        return infra.consumeExactly(topic, keys, values, expected, Duration.ofSeconds(60));
    }

    private static Notification notification(String id, String chat) {
        return Notification.newBuilder().setId(id).setBotId("alerts").setChatId(chat).setKind("quake.alert")
                .setText("quake " + id).setCreatedAt(Instant.now()).build();
    }

}
