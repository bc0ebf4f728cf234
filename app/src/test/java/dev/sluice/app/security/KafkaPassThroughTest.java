package dev.sluice.app.security;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.sluice.app.tools.KafkaClients;
import dev.sluice.config.Settings;
import dev.sluice.sender.SenderConfig;
import dev.sluice.topology.TopologyConfig;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Issue 6, item 8: any Kafka client property passes through as {@code kafka.<property>} to the topology
 * (Kafka Streams' consumer, producer and admin), the sender and the CLI tools, e.g. SASL_SSL with SCRAM, and
 * the JAAS password is never printed: not by our {@code toString}s, not by Kafka's own "values:" log lines
 * of a real client built from those properties.
 */
class KafkaPassThroughTest {
    private static final String JAAS_SECRET = "pa55-w0rd-for-scram-7f3c";
    private static final String JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required "
            + "username=\"sluice\" password=\"" + JAAS_SECRET + "\";";
    private static final String KEYSTORE_SECRET = "keystore-pw-91ab";

    private static Settings secured() {
        Map<String, String> m = new HashMap<>();
        m.put("bootstrap.servers", "127.0.0.1:1"); // nothing listens: the clients are built, never connected
        m.put("schema.registry.url", "http://127.0.0.1:1");
        m.put("application.id", "pass-through-test");
        m.put("kafka.security.protocol", "SASL_SSL");
        m.put("kafka.sasl.mechanism", "SCRAM-SHA-512");
        m.put("kafka.sasl.jaas.config", JAAS);
        m.put("kafka.ssl.keystore.password", KEYSTORE_SECRET);
        m.put("kafka.ssl.endpoint.identification.algorithm", "https");
        // sender keys
        m.put("bot.alerts.token", dev.sluice.testkit.FakeTokens.of("123456789"));
        m.put("budget.mode", "local");
        return Settings.of(m);
    }

    @Test
    void topologyClientsGetTheSecurityProperties() {
        TopologyConfig config = TopologyConfig.from(secured());
        StreamsConfig streams = new StreamsConfig(config.streamsProperties());
        List<Map<String, Object>> clients = List.of(
                streams.getMainConsumerConfigs("g", "c", 0), streams.getRestoreConsumerConfigs("c"),
                streams.getProducerConfigs("c"), streams.getAdminConfigs("c"));
        for (Map<String, Object> client : clients) {
            assertThat(client).containsEntry("security.protocol", "SASL_SSL").containsEntry("sasl.mechanism", "SCRAM-SHA-512")
                    .containsKey("sasl.jaas.config").containsKey("ssl.keystore.password");
        }
        assertThat(config.toString()).contains("security.protocol=SASL_SSL").doesNotContain(JAAS_SECRET, KEYSTORE_SECRET);
    }

    @Test
    void senderAndToolClientsGetTheSecurityPropertiesAndNeverPrintTheSecrets() {
        SenderConfig sender = SenderConfig.from(secured());
        assertThat(sender.kafkaProperties()).containsEntry("security.protocol", "SASL_SSL")
                .containsEntry("sasl.mechanism", "SCRAM-SHA-512").containsEntry("sasl.jaas.config", JAAS);
        assertThat(sender.toString()).contains("security.protocol=SASL_SSL").doesNotContain(JAAS_SECRET, KEYSTORE_SECRET);

        Map<String, Object> producer = KafkaClients.producer(secured(), "t");
        Map<String, Object> reader = KafkaClients.reader(secured(), "t");
        for (Map<String, Object> client : List.of(producer, reader)) {
            assertThat(client).containsEntry("security.protocol", "SASL_SSL").containsEntry("sasl.jaas.config", JAAS)
                    .containsEntry("bootstrap.servers", "127.0.0.1:1");
            assertThat(KafkaClients.describe(client)).contains("SASL_SSL").doesNotContain(JAAS_SECRET, KEYSTORE_SECRET);
        }
        assertThat(secured().toString()).doesNotContain(JAAS_SECRET, KEYSTORE_SECRET);
    }

    @Test
    void realClientsBuiltFromThePassThroughLogTheirConfigWithTheSecretsHidden() {
        LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
        ListAppender<ILoggingEvent> captured = new ListAppender<>();
        captured.setContext(ctx);
        captured.start();
        Logger kafka = ctx.getLogger("org.apache.kafka");
        Level before = kafka.getLevel();
        kafka.setLevel(Level.INFO); // Kafka logs every client's "values:" at INFO; make sure we see them
        kafka.addAppender(captured);
        try {
            // A keystore password without a keystore file is refused by the client, so the real clients go without it.
            Settings s = secured().with("kafka.ssl.keystore.password", "");
            Map<String, Object> producerProps = new HashMap<>(KafkaClients.producer(s, "secured-producer"));
            producerProps.remove("ssl.keystore.password");
            Map<String, Object> consumerProps = new HashMap<>(SenderConfig.from(s).kafkaProperties());
            consumerProps.remove("ssl.keystore.password");
            consumerProps.put("bootstrap.servers", "127.0.0.1:1");
            consumerProps.put("group.id", "secured");
            // SCRAM needs no server to log in; SSL uses the JDK's default trust store. Neither connects here.
            try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(producerProps, new ByteArraySerializer(), new ByteArraySerializer());
                 KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(consumerProps, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                assertThat(p).isNotNull();
                assertThat(c).isNotNull();
            }
        } finally {
            kafka.detachAppender(captured);
            kafka.setLevel(before);
        }
        String all = String.join("\n", captured.list.stream().map(ILoggingEvent::getFormattedMessage).toList());
        assertThat(all).contains("ProducerConfig values", "ConsumerConfig values")
                .contains("security.protocol = SASL_SSL", "sasl.mechanism = SCRAM-SHA-512", "sasl.jaas.config = [hidden]")
                .doesNotContain(JAAS_SECRET, KEYSTORE_SECRET);
    }
}
