package dev.sluice.app.tools;

import dev.sluice.config.Settings;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * Kafka client properties for the CLI tools ({@code produce}, {@code replay}), read the way the topology and
 * the sender read theirs: {@code bootstrap.servers}, then every {@code kafka.<property>} passed through with
 * the prefix removed (SASL_SSL, mTLS keystores, {@code client.dns.lookup}, ...). Named keys win over
 * pass-through. The maps may hold secrets ({@code sasl.jaas.config}, keystore passwords): print them only
 * through {@link #describe(Map)}.
 */
public final class KafkaClients {
    /** The prefix of pass-through client properties, as in TopologyConfig and SenderConfig. */
    public static final String KAFKA_PREFIX = "kafka.";
    public static final String BOOTSTRAP_SERVERS = "bootstrap.servers";

    private KafkaClients() {
    }

    /** An idempotent producer ({@code acks=all}) with the pass-through properties. */
    public static Map<String, Object> producer(Settings s, String clientId) {
        Map<String, Object> p = base(s, clientId);
        p.putIfAbsent(ProducerConfig.ACKS_CONFIG, "all");
        p.putIfAbsent(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, "20");
        return p;
    }

    /**
     * A consumer without a group (the tools assign partitions and seek themselves, committing nothing), reading
     * only committed transactional data: the topology writes with exactly_once_v2.
     */
    public static Map<String, Object> reader(Settings s, String clientId) {
        Map<String, Object> p = base(s, clientId);
        p.remove(ConsumerConfig.GROUP_ID_CONFIG);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.putIfAbsent(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "2000");
        return p;
    }

    private static Map<String, Object> base(Settings s, String clientId) {
        Map<String, Object> p = new TreeMap<>(s.withPrefix(KAFKA_PREFIX));
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, s.required(BOOTSTRAP_SERVERS));
        p.putIfAbsent(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
        return p;
    }

    /** The properties with secret values replaced by {@code [redacted]}, for logs and {@code --verbose}. */
    public static String describe(Map<String, Object> props) {
        Map<String, String> safe = new TreeMap<>();
        props.forEach((k, v) -> safe.put(k, Settings.redactIfSecret(k, String.valueOf(v))));
        return safe.toString();
    }
}
