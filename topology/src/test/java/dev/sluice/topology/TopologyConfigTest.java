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
        assertThat(p.getProperty("max.task.idle.ms")).as("issue 21: process what is buffered").isEqualTo("-1");
        assertThat(c.topics().outboxLive()).isEqualTo("outbox.live");
    }

    @Test
    void maxTaskIdleMsPassedThroughWins() {
        Properties p = TopologyConfig.from(Settings.of(REQUIRED).with("kafka.max.task.idle.ms", "0")).streamsProperties();
        assertThat(p.getProperty("max.task.idle.ms")).isEqualTo("0");
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

    @Test
    void issue5KeysHaveDefaults() {
        TopologyConfig c = TopologyConfig.from(Settings.of(REQUIRED));
        assertThat(c.digestFlushIntervalMs()).isEqualTo(60_000);
        assertThat(c.digestMaxKeys()).isEqualTo(200);
        assertThat(c.digestMaxFoldedIds()).isEqualTo(100);
        assertThat(c.scheduleReleaseIntervalMs()).isEqualTo(250);
        assertThat(c.pressureDrainTimeThresholdMs()).isEqualTo(30_000);
        assertThat(c.pressureStatusMaxAgeMs()).isEqualTo(60_000);
        assertThat(c.classifier().rules()).isEmpty();
        assertThat(c.chatPolicy().defaultPolicy()).isEmpty();
        assertThat(c.chatPolicy().forChat("42")).isEmpty();
    }

    @Test
    void issue5KeysAreReadAndValidated() {
        TopologyConfig c = TopologyConfig.from(Settings.of(REQUIRED)
                .with("classify.kind.patterns", "meeting.*=CRITICAL, board.*=collapsible")
                .with("digest.flush.interval.ms", "5000").with("digest.max.keys", "10").with("digest.max.folded.ids", "20")
                .with("policy.chat.rate", "5/h").with("policy.chat.burst", "3")
                .with("policy.chat.overrides", "42=20/h:10, -1001=none, 77=1/min"));
        assertThat(c.classifier().rules()).extracting(KindPatternClassifier.Rule::glob).containsExactly("meeting.*", "board.*");
        assertThat(c.digestFlushIntervalMs()).isEqualTo(5000);
        assertThat(c.digestMaxKeys()).isEqualTo(10);
        assertThat(c.digestMaxFoldedIds()).isEqualTo(20);
        assertThat(c.chatPolicy().forChat("1").orElseThrow().toString()).isEqualTo("GcraPolicy[rate=5/h, burst=3]");
        assertThat(c.chatPolicy().forChat("42").orElseThrow().toString()).isEqualTo("GcraPolicy[rate=20/h, burst=10]");
        assertThat(c.chatPolicy().forChat("-1001")).isEmpty();
        assertThat(c.chatPolicy().forChat("77").orElseThrow().toString()).isEqualTo("GcraPolicy[rate=1/min, burst=1]");

        Map<String, String> bad = Map.of(
                "classify.kind.patterns", "meeting.*=URGENT",
                "digest.flush.interval.ms", "0",
                "digest.max.keys", "-1",
                "digest.max.folded.ids", "0",
                "schedule.release.interval.ms", "5",
                "pressure.drain.time.threshold.ms", "abc",
                "policy.chat.rate", "5 per hour",
                "policy.chat.overrides", "42=5/h:x");
        bad.forEach((key, value) -> assertThatThrownBy(() -> TopologyConfig.from(Settings.of(REQUIRED).with(key, value)))
                .as(key).isInstanceOf(ConfigException.class).hasMessageContaining(key).hasMessageContaining(value));
        assertThatThrownBy(() -> TopologyConfig.from(Settings.of(REQUIRED).with("policy.chat.burst", "5")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("policy.chat.burst").hasMessageContaining("policy.chat.rate");
    }

    @Test
    void issue16KeysHaveDefaultsAndAreValidated() {
        TopologyConfig d = TopologyConfig.from(Settings.of(REQUIRED));
        assertThat(d.dedupeWindowMs()).isEqualTo(86_400_000L);
        assertThat(d.scheduleMaxHorizonMs()).isEqualTo(400L * 86_400_000L);
        assertThat(d.streamThreadReplacementsMax()).isEqualTo(3);
        assertThat(d.streamThreadReplacementsWindowMs()).isEqualTo(600_000L);
        TopologyConfig c = TopologyConfig.from(Settings.of(REQUIRED).with("dedupe.window.ms", "3600000")
                .with("schedule.max.horizon.ms", "86400000").with("stream.thread.replacements.max", "0")
                .with("stream.thread.replacements.window.ms", "60000"));
        assertThat(c.dedupeWindowMs()).isEqualTo(3_600_000L);
        assertThat(c.scheduleMaxHorizonMs()).isEqualTo(86_400_000L);
        assertThat(c.streamThreadReplacementsMax()).isZero();
        assertThat(c.streamThreadReplacementsWindowMs()).isEqualTo(60_000L);
        Map<String, String> bad = Map.of(
                "dedupe.window.ms", "10",
                "schedule.max.horizon.ms", "-1",
                "stream.thread.replacements.max", "-2",
                "stream.thread.replacements.window.ms", "soon",
                "digest.max.folded.ids", "1001");
        bad.forEach((key, value) -> assertThatThrownBy(() -> TopologyConfig.from(Settings.of(REQUIRED).with(key, value)))
                .as(key).isInstanceOf(ConfigException.class).hasMessageContaining(key).hasMessageContaining(value));
    }

    @Test
    void issue21CriticalCommitIntervalHasADefaultZeroTurnsItOffAndItIsValidated() {
        assertThat(TopologyConfig.from(Settings.of(REQUIRED)).criticalCommitIntervalMs()).isEqualTo(20);
        assertThat(TopologyConfig.from(Settings.of(REQUIRED).with("critical.commit.interval.ms", "0")).criticalCommitIntervalMs()).isZero();
        assertThat(TopologyConfig.from(Settings.of(REQUIRED).with("critical.commit.interval.ms", "250")).criticalCommitIntervalMs()).isEqualTo(250);
        for (String value : new String[] {"-1", "60001", "soon"}) {
            assertThatThrownBy(() -> TopologyConfig.from(Settings.of(REQUIRED).with("critical.commit.interval.ms", value)))
                    .as(value).isInstanceOf(ConfigException.class).hasMessageContaining("critical.commit.interval.ms").hasMessageContaining(value);
        }
    }
}
