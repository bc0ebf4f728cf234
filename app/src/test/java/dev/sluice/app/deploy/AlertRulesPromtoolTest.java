package dev.sluice.app.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * The alert rules evaluated by Prometheus itself: {@code promtool check rules deploy/prometheus/alerts.yml} and
 * {@code promtool test rules deploy/prometheus/tests/*.test.yml}, where every alert has its own file
 * {@code <AlertName>.test.yml} with a case where it fires and one where it does not. A negative control shows a
 * wrong expectation fails. {@code promtool} comes from Debian's {@code prometheus} package ({@code .ci/run});
 * without it on the PATH the test skips and prints why.
 *
 * <p>To test a new alert: add {@code deploy/prometheus/tests/<AlertName>.test.yml} (copy one, keep
 * {@code rule_files: [../alerts.yml]}); this test finds it and requires both cases.
 */
class AlertRulesPromtoolTest {
    private static Path rules;
    private static Path tests;

    @BeforeAll
    static void findRulesAndPromtool() {
        Path root = Path.of("").toAbsolutePath();
        while (root != null && !Files.exists(root.resolve("deploy/prometheus/alerts.yml"))) {
            root = root.getParent();
        }
        assertThat(root).as("deploy/prometheus/alerts.yml above " + Path.of("").toAbsolutePath()).isNotNull();
        rules = root.resolve("deploy/prometheus/alerts.yml");
        tests = root.resolve("deploy/prometheus/tests");
        boolean present = runs("promtool", "--version");
        if (!present) {
            System.out.println("AlertRulesPromtoolTest skipped: promtool is not on the PATH (Debian package 'prometheus'; .ci/run installs it)");
        }
        Assumptions.assumeTrue(present, "promtool is not on the PATH (Debian package 'prometheus')");
    }

    @Test
    void prometheusAcceptsTheRules() throws Exception {
        Result check = promtool(List.of("check", "rules", rules.toString()));
        assertThat(check.exitCode).as(check.output).isZero();
        assertThat(check.output).contains("SUCCESS");
    }

    @Test
    void prometheusAcceptsTheComposeConfigWithItsAlertmanager() throws Exception {
        // Syntax only: the rule file path in it is the container's (/etc/prometheus/alerts.yml).
        Result check = promtool(List.of("check", "config", "--syntax-only", rules.resolveSibling("prometheus.yml").toString()));
        assertThat(check.exitCode).as(check.output).isZero();
    }

    @Test
    void everyAlertHasATestFileThatSeesItFireAndNotFire() throws IOException {
        for (String alert : alertNames()) {
            Path file = tests.resolve(alert + ".test.yml");
            assertThat(file).as("promtool test for alert " + alert).exists();
            Map<String, Object> doc = yaml(file);
            assertThat(doc.get("rule_files").toString()).as(file + " rule_files").contains("../alerts.yml");
            boolean fires = false;
            boolean silent = false;
            for (Map<String, Object> test : list(doc.get("tests"))) {
                for (Map<String, Object> check : list(test.get("alert_rule_test"))) {
                    if (alert.equals(check.get("alertname"))) {
                        boolean empty = check.get("exp_alerts") == null || list(check.get("exp_alerts")).isEmpty();
                        fires |= !empty;
                        silent |= empty;
                    }
                }
            }
            assertThat(fires).as(file + ": a case where " + alert + " fires").isTrue();
            assertThat(silent).as(file + ": a case where " + alert + " does not fire").isTrue();
        }
    }

    @Test
    void everyTestFilePasses() throws Exception {
        List<String> args = new ArrayList<>(List.of("test", "rules"));
        try (Stream<Path> files = Files.list(tests)) {
            files.filter(f -> f.getFileName().toString().endsWith(".test.yml")).sorted().forEach(f -> args.add(f.toString()));
        }
        assertThat(args).hasSizeGreaterThan(2 + alertNames().size() - 1);
        Result result = promtool(args);
        assertThat(result.exitCode).as(result.output).isZero();
        assertThat(result.output).doesNotContain("FAILED");
    }

    @Test
    void aWrongExpectationFails(@TempDir Path dir) throws Exception {
        // Every target answers, yet the test expects SluiceProcessDown: promtool must say FAILED and exit non-zero.
        Path wrong = dir.resolve("wrong.test.yml");
        Files.writeString(wrong, String.join("\n",
                "rule_files: [" + rules + "]",
                "evaluation_interval: 1m",
                "tests:",
                "  - interval: 1m",
                "    input_series:",
                "      - series: 'up{job=\"sluice-sender\", instance=\"sender-1:9465\"}'",
                "        values: '1x5'",
                "    alert_rule_test:",
                "      - eval_time: 4m",
                "        alertname: SluiceProcessDown",
                "        exp_alerts:",
                "          - exp_labels: {job: sluice-sender, instance: \"sender-1:9465\", severity: critical}",
                ""));
        Result result = promtool(List.of("test", "rules", wrong.toString()));
        assertThat(result.exitCode).as(result.output).isNotZero();
        assertThat(result.output).contains("FAILED");
    }

    private static List<String> alertNames() throws IOException {
        List<String> names = new ArrayList<>();
        for (Map<String, Object> group : list(yaml(rules).get("groups"))) {
            for (Map<String, Object> rule : list(group.get("rules"))) {
                if (rule.get("alert") != null) {
                    names.add((String) rule.get("alert"));
                }
            }
        }
        assertThat(names).isNotEmpty();
        return names;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Object o) {
        return o == null ? List.of() : (List<Map<String, Object>>) o;
    }

    private static Map<String, Object> yaml(Path file) throws IOException {
        try (var in = Files.newInputStream(file)) {
            return new Yaml().load(in);
        }
    }

    private static boolean runs(String... cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static Result promtool(List<String> args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("promtool"));
        cmd.addAll(args);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes(); // promtool's output is small; ends when it exits
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("promtool " + args + " ended within 60 s").isTrue();
        return new Result(p.exitValue(), new String(out));
    }

    private record Result(int exitCode, String output) {
    }
}
