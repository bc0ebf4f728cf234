package dev.sluice.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.config.ConfigKey;
import dev.sluice.sender.SenderKeys;
import dev.sluice.sender.budget.client.BudgetClient;
import dev.sluice.topology.TopologyConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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


    @Test
    void the_keys_documented_for_the_sender_are_accepted_from_a_deploy_file_or_the_environment() {
        // issue 15 item 4: these were documented in the README but missing from the list
        for (String key : List.of("budget.reservation.max.ms", "budget.reservation.late.max.ms",
                "budget.reservation.routine.max.ms", "budget.reservation.critical.memory.ms",
                "budget.arrival.guard.limit.per.s", "quota.jdbc.url", "quota.lease.size", "quota.sms-api.limit",
                "quota.llm.window.ms", "provider.sms.url.template", "provider.sms.header.Authorization",
                "bot.fast.rate.per.s", "bot.fast.paid.broadcast")) {
            assertThat(ConfigKeys.isKnown("sender", key)).as(key).isTrue();
        }
        assertThat(ConfigKeys.keyForEnv("sender", "SLUICE_BUDGET_RESERVATION_MAX_MS")).isEqualTo("budget.reservation.max.ms");
        assertThat(ConfigKeys.keyForEnv("sender", "SLUICE_BUDGET_ARRIVAL_GUARD_LIMIT_PER_S"))
                .isEqualTo("budget.arrival.guard.limit.per.s");
        assertThat(ConfigKeys.keyForEnv("sender", "SLUICE_QUOTA_JDBC_URL")).isEqualTo("quota.jdbc.url");
        assertThat(ConfigKeys.keyForEnv("sender", "SLUICE_QUOTA_SMS_LIMIT")).isEqualTo("quota.sms.limit");
        assertThat(ConfigKeys.keyForEnv("sender", "SLUICE_PROVIDER_SMS_URL_TEMPLATE")).isEqualTo("provider.sms.url.template");
        // and a family does not swallow typos
        assertThat(ConfigKeys.isKnown("sender", "provider.sms.url.templat")).isFalse();
        assertThat(ConfigKeys.isKnown("sender", "quota.sms.limits")).isFalse();
        assertThat(ConfigKeys.isKnown("sender", "budget.reservation.max")).isFalse();
    }

    @Test
    void every_sender_key_the_readme_and_the_operations_guide_name_is_a_defined_key() throws IOException {
        Path root = Path.of("").toAbsolutePath();
        while (root != null && !Files.exists(root.resolve("README.md"))) {
            root = root.getParent();
        }
        assertThat(root).isNotNull();
        // `key`, `key=value` and key=value at the start of a line (properties examples)
        Pattern key = Pattern.compile("(?:`|^)((?:budget|sender|redis|quota|provider)\\.[A-Za-z0-9_.<>-]+)(?:`|=)",
                Pattern.MULTILINE);
        List<String> documented = new ArrayList<>();
        for (String doc : List.of("README.md", "docs/operations.md")) {
            Matcher m = key.matcher(Files.readString(root.resolve(doc)));
            while (m.find()) {
                String k = m.group(1).replace("<id>", "sms").replace("<key>", "sms");
                if (!k.endsWith(".") && !k.endsWith("-value")) { // <topic>-value: a registry subject, not a key
                    documented.add(k);
                }
            }
        }
        assertThat(documented).as("keys found in the docs").hasSizeGreaterThan(20);
        List<String> unknown = documented.stream()
                .filter(k -> !ConfigKeys.isKnown("sender", k) && !BudgetClient.KEYS.accepts(k)).toList();
        assertThat(unknown).isEmpty();
    }

    @Test
    void each_sender_key_is_defined_once_with_a_doc() {
        assertThat(SenderKeys.ALL.names()).contains("redis.url", "redis.command.timeout.ms", "budget.global.rate.per.s",
                "quota.jdbc.url");
        for (ConfigKey<?> k : SenderKeys.ALL.keys()) {
            assertThat(k.doc()).as(k.name()).isNotBlank();
            assertThat(k.rule()).as(k.name()).isNotBlank();
        }
        // a key added to SenderConfig as a bare String constant (the old style) would be read but not listed
        assertThat(ConfigKeys.keyConstants(dev.sluice.sender.SenderConfig.class)).isSubsetOf(SenderKeys.ALL.names());
        assertThat(ConfigKeys.keyConstants(SenderKeys.class)).isSubsetOf(SenderKeys.ALL.names());
        assertThat(BudgetClient.KEYS.key("redis.url")).as("the client reads the senders' definition")
                .containsSame(SenderKeys.ALL.key("redis.url").orElseThrow());
    }
}
