package dev.sluice.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.sender.SenderConfig;
import dev.sluice.topology.TopologyConfig;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** A key constant added to a config class must also be listed in ConfigKeys (or the deploy check misses it). */
class ConfigKeysTest {

    @Test
    void keysComeFromTheConfigClassesConstants() {
        assertThat(ConfigKeys.topology()).contains("digest.flush.interval.ms", "classify.kind.patterns", "application.id",
                "schema.registry.url", "ops.port", "topic.notifications");
        assertThat(ConfigKeys.sender()).contains("budget.global.rate.per.s", "redis.url", "sender.buffer.max.records",
                "telegram.api.url", "ops.port");
        // prefixes and suffixes are families, not keys
        assertThat(ConfigKeys.sender()).doesNotContain("kafka.", "bot.", ".token");
        assertThat(ConfigKeys.keyConstants(TopologyConfig.class)).hasSizeGreaterThan(10);
    }

    @Test
    void familiesAreKnownPerProcess() {
        assertThat(ConfigKeys.isKnown("sender", "bot.quakes.token")).isTrue();
        assertThat(ConfigKeys.isKnown("topology", "bot.quakes.token")).isFalse();
        assertThat(ConfigKeys.isKnown("topology", "kafka.security.protocol")).isTrue();
        assertThat(ConfigKeys.isKnown("sender", "kafka.")).isFalse();
        assertThat(ConfigKeys.isKnown("sender", "ops.port")).isTrue();
    }

}
