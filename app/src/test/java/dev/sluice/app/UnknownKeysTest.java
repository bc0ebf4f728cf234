package dev.sluice.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.config.ConfigException;
import dev.sluice.config.Settings;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Misspelled and unknown keys stop a command at start, naming the key, where it came from and the nearest known key
 * (before: {@code sluice sender -D budget.global.rate.per.sec=10} started with the default 30/s).
 */
class UnknownKeysTest {
    @TempDir
    Path dir;

    private static ConfigOptions options(Path file, String... overrides) {
        ConfigOptions o = new ConfigOptions();
        o.configFile = file;
        for (String kv : overrides) {
            String[] p = kv.split("=", 2);
            o.overrides.put(p[0], p[1]);
        }
        return o;
    }

    @Test
    void the_sender_refuses_a_misspelled_key_and_names_the_nearest_one() {
        StringWriter err = new StringWriter();
        CommandLine cli = dev.sluice.app.logging.RedactingCliErrors.install(new CommandLine(new SluiceCli()))
                .setErr(new PrintWriter(err, true)).setOut(new PrintWriter(new StringWriter(), true));
        int exit = cli.execute("sender", "-D", "bootstrap.servers=127.0.0.1:1", "-D", "schema.registry.url=http://127.0.0.1:1",
                "-D", "bot.alerts.token=1:x", "-D", "budget.global.rate.per.sec=10");
        assertThat(exit).isNotZero();
        assertThat(err.toString()).contains("unknown config 'budget.global.rate.per.sec' (given with -D)")
                .contains("did you mean 'budget.global.rate.per.s'?");
    }

    @Test
    void unknown_keys_from_D_and_the_file_are_refused_with_a_hint() throws Exception {
        assertThatThrownBy(() -> options(null, "nonexistent.key=1").load(Map.of()))
                .isInstanceOf(ConfigException.class).hasMessageContaining("unknown config 'nonexistent.key' (given with -D)");
        Path file = dir.resolve("sluice.properties");
        Files.writeString(file, "bootstrap.servers=k:9092\ndigest.flush.intervl.ms=100\n");
        assertThatThrownBy(() -> options(file).load(Map.of()))
                .hasMessageContaining("unknown config 'digest.flush.intervl.ms' (in " + file + ")")
                .hasMessageContaining("did you mean 'digest.flush.interval.ms'?");
        // families: the id is kept, the suffix corrected
        assertThatThrownBy(() -> options(null, "bot.alerts.tokn=1:x").load(Map.of()))
                .hasMessageContaining("did you mean 'bot.alerts.token'?");
        assertThatThrownBy(() -> options(null, "kafak.linger.ms=5").load(Map.of()))
                .hasMessageContaining("did you mean 'kafka.linger.ms'?");
        // a Kafka property without the pass-through prefix
        assertThatThrownBy(() -> options(null, "linger.ms=5").load(Map.of()))
                .hasMessageContaining("Kafka client properties take the prefix kafka., did you mean 'kafka.linger.ms'?");
        assertThatThrownBy(() -> options(null, "provider.sms.url.templat=x").load(Map.of()))
                .hasMessageContaining("did you mean 'provider.sms.url.template'?");
    }

    @Test
    void environment_variables_in_sluices_namespace_are_checked_others_only_warned_about() {
        assertThatThrownBy(() -> options(null).load(Map.of("SLUICE_BUDGET_GLOBAL_RATE_PER_SECOND", "10")))
                .hasMessageContaining("unknown config 'budget.global.rate.per.second' (from the environment variable "
                        + "SLUICE_BUDGET_GLOBAL_RATE_PER_SECOND)")
                .hasMessageContaining("did you mean 'budget.global.rate.per.s'?");
        // the test kit's own variable, set by scripts/fresh-machine-check.sh for every test JVM and child
        Settings s = options(null).load(Map.of("SLUICE_TESTKIT_HIDE", "postgres", "SLUICE_BUDGET_GLOBAL_RATE_PER_S", "10"));
        assertThat(s.string("budget.global.rate.per.s", null)).isEqualTo("10");
    }

    @Test
    void every_components_keys_and_families_are_accepted_by_every_command() throws Exception {
        Path file = dir.resolve("all.properties");
        // one file for all: topology, sender, tools, the keys sluice dev writes into sluice-dev.properties
        Files.writeString(file, String.join("\n", "bootstrap.servers=k:9092", "schema.registry.url=http://r", "redis.url=redis://r:6379",
                "text.too.long=split", "digest.flush.interval.ms=100", "num.stream.threads=2", "budget.global.rate.per.s=29",
                "bot.alerts.token=1:x", "bot.alerts.rate.per.s=5", "provider.sms.url.template=http://x/{token}",
                "provider.sms.header.Authorization=Bearer x", "quota.sms.limit=10", "quota.sms.window.ms=1000",
                "kafka.security.protocol=SSL", "ops.port=0", "log.level=INFO", "log.format=json", "topic.notifications=n",
                "basic.auth.user.info=a:b", "sender.buffer.max.records=10"));
        Settings s = options(file).load(Map.of("SLUICE_KAFKA_LINGER_MS", "20", "SLUICE_BOT_QUAKES_TOKEN", "2:y"));
        assertThat(s.asMap()).containsKeys("text.too.long", "kafka.linger.ms", "bot.quakes.token");
        // the keys the bench hands its `sluice sender` children with -D (SenderProcess)
        for (String key : java.util.List.of("budget.arrival.guard.limit.per.s", "budget.chat.burst", "budget.chat.rate.per.s",
                "budget.global.burst", "budget.max.replicas", "budget.mode", "budget.redis.outage.mode",
                "budget.reservation.late.max.ms", "budget.reservation.max.ms", "budget.reservation.routine.max.ms",
                "sender.commit.interval.ms", "sender.group.id",
                "sender.instance.id", "sender.status.interval.ms", "topic.outbox.live", "topic.outbox.backfill",
                "topic.delivery.results", "topic.sender.status", "kafka.session.timeout.ms", "edit.wait.max.ms")) {
            assertThat(UnknownKeys.isKnown(key)).as(key).isTrue();
        }
    }

    @Test
    void every_defined_key_is_reached_by_its_environment_variable() {
        java.util.Set<String> all = new java.util.TreeSet<>(ConfigKeys.topology());
        all.addAll(ConfigKeys.sender());
        for (String key : all) {
            Settings s = options(null).load(Map.of(Settings.envName(key), "1"));
            assertThat(s.asMap()).as(Settings.envName(key)).containsOnlyKeys(key);
        }
    }

    @Test
    void the_nearest_key_is_offered_only_when_it_is_near() {
        assertThat(UnknownKeys.hint("nonexistent.key")).isEmpty();
        assertThat(UnknownKeys.distance("budget.global.rate.per.sec", "budget.global.rate.per.s")).isEqualTo(2);
    }

    /** Before: the error pointed at "README.md (Configuration)", a section README.md does not have. */
    @Test
    void the_error_points_at_a_readme_section_and_a_doc_that_exist() throws Exception {
        assertThatThrownBy(() -> options(null, "nonexistent.key=1").load(Map.of()))
                .hasMessageEndingWith("; " + UnknownKeys.WHERE_KEYS_ARE);
        Path root = Path.of("").toAbsolutePath();
        while (root != null && !Files.exists(root.resolve("README.md"))) {
            root = root.getParent();
        }
        assertThat(root).as("repository root").isNotNull();
        assertThat(Files.readAllLines(root.resolve("README.md"))).contains("## " + UnknownKeys.README_SECTION);
        assertThat(UnknownKeys.WHERE_KEYS_ARE).contains("docs/operations.md");
        assertThat(root.resolve("docs/operations.md")).exists();
    }
}
