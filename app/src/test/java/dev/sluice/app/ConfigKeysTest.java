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
    void everyKeyConstantOfTheConfigClassesIsListed() throws Exception {
        assertThat(ConfigKeys.topology()).containsAll(keyConstants(TopologyConfig.class));
        assertThat(ConfigKeys.sender()).containsAll(keyConstants(SenderConfig.class));
    }

    @Test
    void familiesAreKnownPerProcess() {
        assertThat(ConfigKeys.isKnown("sender", "bot.quakes.token")).isTrue();
        assertThat(ConfigKeys.isKnown("topology", "bot.quakes.token")).isFalse();
        assertThat(ConfigKeys.isKnown("topology", "kafka.security.protocol")).isTrue();
        assertThat(ConfigKeys.isKnown("sender", "kafka.")).isFalse();
        assertThat(ConfigKeys.isKnown("sender", "ops.port")).isTrue();
    }

    /** Public static String constants that hold a dotted key (not prefixes, suffixes or default values). */
    private static Set<String> keyConstants(Class<?> type) throws IllegalAccessException {
        Set<String> keys = new TreeSet<>();
        for (Field f : type.getFields()) {
            int m = f.getModifiers();
            if (Modifier.isStatic(m) && f.getType() == String.class && !f.getName().startsWith("DEFAULT_")) {
                String v = (String) f.get(null);
                if (v.matches("[a-z0-9]+(\\.[a-z0-9-]+)+")) {
                    keys.add(v);
                }
            }
        }
        assertThat(keys).as("key constants of " + type.getSimpleName()).hasSizeGreaterThan(5);
        return keys;
    }
}
