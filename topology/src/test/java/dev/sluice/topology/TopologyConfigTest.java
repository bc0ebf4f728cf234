package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.config.ConfigException;
import dev.sluice.config.Settings;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class TopologyConfigTest {
    private static final Map<String, String> REQUIRED = Map.of(
            "bootstrap.servers", "kafka:9092", "schema.registry.url", "http://registry:8081");

    @Test
    void defaults() {
        TopologyConfig c = TopologyConfig.from(Settings.of(REQUIRED));
        Properties p = c.streamsProperties();
        assertThat(p.getProperty("application.id")).isEqualTo("sluice-topology");
        assertThat(p.getProperty("bootstrap.servers")).isEqualTo("kafka:9092");
        assertThat(p.getProperty("processing.guarantee")).isEqualTo("exactly_once_v2");
        assertThat(p.getProperty("num.stream.threads")).isEqualTo("1");
        assertThat(p).doesNotContainKeys("state.dir", "commit.interval.ms");
        assertThat(c.topics().outboxLive()).isEqualTo("outbox.live");
    }

    @Test
    void namedKeysTopicsAndKafkaPassThrough() {
        Settings s = Settings.of(REQUIRED)
                .with("application.id", "sluice-eu").with("processing.guarantee", "at_least_once")
                .with("state.dir", "/var/lib/sluice").with("num.stream.threads", "4").with("commit.interval.ms", "250")
                .with("topic.outbox.live", "eu.outbox.live")
                .with("kafka.security.protocol", "SASL_SSL").with("kafka.replication.factor", "3")
                .with("kafka.sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required password=\"pw\";")
                .with("kafka.application.id", "ignored");
        TopologyConfig c = TopologyConfig.from(s);
        Properties p = c.streamsProperties();
        assertThat(p.getProperty("application.id")).isEqualTo("sluice-eu");
        assertThat(p.getProperty("processing.guarantee")).isEqualTo("at_least_once");
        assertThat(p.getProperty("state.dir")).isEqualTo("/var/lib/sluice");
        assertThat(p.getProperty("num.stream.threads")).isEqualTo("4");
        assertThat(p.getProperty("commit.interval.ms")).isEqualTo("250");
        assertThat(p.getProperty("security.protocol")).isEqualTo("SASL_SSL");
        assertThat(p.getProperty("replication.factor")).isEqualTo("3");
        assertThat(c.topics().outboxLive()).isEqualTo("eu.outbox.live");
        assertThat(c.toString()).doesNotContain("pw").contains("security.protocol=SASL_SSL");
    }

    @Test
    void environmentOverrides() {
        Settings s = Settings.of(REQUIRED).withEnvironment(Map.of("SLUICE_NUM_STREAM_THREADS", "3", "SLUICE_BOOTSTRAP_SERVERS", "b:1"));
        TopologyConfig c = TopologyConfig.from(s);
        assertThat(c.numStreamThreads()).isEqualTo(3);
        assertThat(c.bootstrapServers()).isEqualTo("b:1");
    }

    @Test
    void invalidValuesNameKeyAndValue() {
        assertThatThrownBy(() -> TopologyConfig.from(Settings.of(Map.of("schema.registry.url", "http://r"))))
                .isInstanceOf(ConfigException.class).hasMessageContaining("bootstrap.servers");
        assertThatThrownBy(() -> TopologyConfig.from(Settings.of(REQUIRED).with("processing.guarantee", "exactly_once")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("'exactly_once'").hasMessageContaining("processing.guarantee");
        assertThatThrownBy(() -> TopologyConfig.from(Settings.of(REQUIRED).with("num.stream.threads", "0")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("num.stream.threads").hasMessageContaining("'0'");
        assertThatThrownBy(() -> TopologyConfig.from(Settings.of(REQUIRED).with("application.id", "my app")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("application.id");
    }
}
