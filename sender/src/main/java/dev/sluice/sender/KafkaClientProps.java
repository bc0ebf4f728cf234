package dev.sluice.sender;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * The properties of the sender's Kafka clients: the outbox consumer (also used, with another record bound, by the
 * result lookup), the result producer, the status producer and the dead-letter producer. {@code kafka.*}
 * settings of the config override the defaults here.
 *
 * <p>Thread: stateless; each call returns a new map.
 */
final class KafkaClientProps {
    private KafkaClientProps() {
    }

    static Map<String, Object> consumer(SenderConfig c, int maxPollRecords) {
        Map<String, Object> p = new HashMap<>();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, c.bootstrapServers());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, c.groupId());
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "sluice-sender-" + c.instanceId());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        // The topology writes the outbox with exactly_once_v2: never read aborted records.
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, maxPollRecords);
        p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        p.putAll(c.kafkaProperties());
        return p;
    }

    /** The producer of {@code delivery.results}. */
    static Map<String, Object> producer(SenderConfig c) {
        Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, c.bootstrapServers());
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "sluice-sender-results-" + c.instanceId());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.putAll(c.kafkaProperties());
        return p;
    }

    /** The producer of {@code sender.status}. */
    static Map<String, Object> statusProducer(SenderConfig c) {
        Map<String, Object> p = producer(c);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "sluice-sender-status-" + c.instanceId());
        // Reports are periodic and replaceable: never hold the status thread (or close) for long on a missing topic.
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 2_000);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10_000);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        return p;
    }

    /** The producer of the outbox dead-letter topic. */
    static Map<String, Object> dlqProducer(SenderConfig c) {
        Map<String, Object> p = producer(c);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "sluice-sender-dlq-" + c.instanceId());
        // The poll thread waits for a dead-letter write: a missing topic must not hold it for the default minute.
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) UnreadableRecords.DLQ_WRITE_TIMEOUT.toMillis());
        return p;
    }
}
