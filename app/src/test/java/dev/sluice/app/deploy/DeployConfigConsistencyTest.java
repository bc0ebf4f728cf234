package dev.sluice.app.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.app.ConfigKeys;
import dev.sluice.app.ops.OpsConfig;
import dev.sluice.app.ops.ProcessMetrics;
import dev.sluice.config.Topics;
import dev.sluice.metrics.BudgetState;
import dev.sluice.metrics.SenderMetrics;
import dev.sluice.metrics.SluiceMetrics;
import dev.sluice.metrics.TopologyMetrics;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * No Docker engine runs here, so this test keeps the deploy files honest against the code: every
 * {@code SLUICE_*} variable in docker-compose.yml is a config key the process reads, every Prometheus
 * scrape target is the ops port that process serves, and every metric the dashboard and the alert
 * rules query is one a Sluice process exposes (checked against a real Prometheus scrape of the
 * registered meters, so Prometheus naming — {@code _total}, {@code _seconds}, {@code _bucket} — is
 * Micrometer's, not a guess).
 */
public class DeployConfigConsistencyTest {
    /**
     * Kafka client and Streams metrics (Micrometer's {@code KafkaClientMetrics} / {@code KafkaStreamsMetrics}
     * names, per process) that alert rules query. Not registered without a broker, so the scrape below cannot
     * see them: {@code TopologyOpsIT} and {@code SenderOpsIT} check each name in a real process's scrape.
     */
    public static final Map<String, Set<String>> KAFKA_METRICS_IN_ALERTS = Map.of(
            "topology", Set.of("kafka_stream_failed_stream_threads_total", "kafka_stream_alive_stream_threads"),
            "sender", Set.of("kafka_consumer_fetch_manager_records_lag_max"));
    /** Series Prometheus itself creates for every target. */
    private static final Set<String> PROMETHEUS_SYNTHETIC = Set.of("up", "scrape_duration_seconds", "scrape_samples_scraped");
    private static final Pattern IDENT = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Set<String> PROMQL_WORDS = Set.of("by", "without", "on", "ignoring", "group_left", "group_right",
            "bool", "and", "or", "unless", "offset", "inf", "nan");

    private static Path root;
    private static Map<String, Map<String, Object>> services;
    private static Set<String> exposedMetrics;

    @BeforeAll
    @SuppressWarnings("unchecked")
    static void load() throws IOException {
        root = Path.of("").toAbsolutePath();
        while (root != null && !Files.exists(root.resolve("docker-compose.yml"))) {
            root = root.getParent();
        }
        assertThat(root).as("docker-compose.yml above " + Path.of("").toAbsolutePath()).isNotNull();
        Map<String, Object> compose = yaml(root.resolve("docker-compose.yml"));
        services = (Map<String, Map<String, Object>>) (Map<?, ?>) compose.get("services");
        exposedMetrics = scrapeEverySluiceMeter(botIds());
    }

    @Test
    void composeRunsTheTopologyTwoSendersAndTheInfrastructure() {
        assertThat(services).containsKeys("kafka", "schema-registry", "redis", "fake-telegram", "topology", "prometheus", "grafana");
        assertThat(sluiceServices("sender")).hasSizeGreaterThanOrEqualTo(2);
        assertThat(sluiceServices("topology")).hasSize(1);
        assertThat((String) services.get("kafka").get("image")).startsWith("apache/kafka:4.");
        assertThat(env("kafka")).containsEntry("KAFKA_PROCESS_ROLES", "broker,controller");
        assertThat(env("sender-1").get("SLUICE_SENDER_INSTANCE_ID")).isNotEqualTo(env("sender-2").get("SLUICE_SENDER_INSTANCE_ID"));
    }

    @Test
    @SuppressWarnings("unchecked")
    void everySluiceCommandParsesAndTheFakeTelegramIsReachableFromOtherContainers() {
        for (String name : services.keySet()) {
            if (process(name) == null) {
                continue;
            }
            List<String> args = ((List<Object>) services.get(name).get("command")).stream().map(String::valueOf).toList();
            // Parsing only (no execution): an unknown option or a bad value fails here, not in the container.
            new picocli.CommandLine(new dev.sluice.app.SluiceCli()).parseArgs(args.toArray(String[]::new));
        }
        List<Object> fake = (List<Object>) services.get("fake-telegram").get("command");
        int bind = fake.indexOf("--bind-address");
        assertThat(bind).as("fake-telegram must listen beyond loopback; senders call http://fake-telegram:8081").isPositive();
        assertThat(fake.get(bind + 1)).isEqualTo("0.0.0.0");
        assertThat(env("sender-1").get("SLUICE_TELEGRAM_API_URL")).asString()
                .startsWith("http://fake-telegram:" + fake.get(fake.indexOf("--port") + 1) + "/");
    }

    @Test
    void everySluiceEnvironmentVariableIsARealConfigKey() {
        List<String> unknown = new ArrayList<>();
        int checked = 0;
        for (String name : services.keySet()) {
            String process = process(name);
            for (String var : env(name).keySet()) {
                if (!var.startsWith("SLUICE_")) {
                    continue;
                }
                checked++;
                if (process == null || (!process.equals("topology") && !process.equals("sender"))) {
                    unknown.add(name + ": " + var + " (this service reads no Sluice config)");
                } else if (ConfigKeys.keyForEnv(process, var) == null) {
                    unknown.add(name + ": " + var + " is no config key of sluice " + process);
                }
            }
        }
        assertThat(checked).as("SLUICE_* variables in docker-compose.yml").isGreaterThan(10);
        assertThat(unknown).isEmpty();
    }

    @Test
    void theCheckRejectsAKeyThatDoesNotExist() {
        // Guards the guard: a typo must not pass.
        assertThat(ConfigKeys.keyForEnv("sender", "SLUICE_BUDGET_GLOBAL_RATE_PER_SECOND")).isNull();
        assertThat(ConfigKeys.keyForEnv("topology", "SLUICE_REDIS_URL")).isNull();
        assertThat(ConfigKeys.keyForEnv("sender", "SLUICE_REDIS_URL")).isEqualTo("redis.url");
        assertThat(ConfigKeys.keyForEnv("sender", "SLUICE_BOT_QUAKES_TOKEN")).isEqualTo("bot.quakes.token");
        assertThat(ConfigKeys.keyForEnv("topology", "SLUICE_KAFKA_SECURITY_PROTOCOL")).isEqualTo("kafka.security.protocol");
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyScrapeTargetIsTheOpsPortOfThatProcess() throws IOException {
        Map<String, Object> prom = yaml(root.resolve("deploy/prometheus/prometheus.yml"));
        Set<String> scrapedServices = new TreeSet<>();
        for (Map<String, Object> job : (List<Map<String, Object>>) prom.get("scrape_configs")) {
            if (!String.valueOf(job.get("job_name")).startsWith("sluice-")) {
                continue;
            }
            assertThat(job.getOrDefault("metrics_path", "/metrics")).isEqualTo("/metrics");
            for (Map<String, Object> sc : (List<Map<String, Object>>) job.get("static_configs")) {
                for (String target : (List<String>) sc.get("targets")) {
                    String host = target.substring(0, target.lastIndexOf(':'));
                    int port = Integer.parseInt(target.substring(target.lastIndexOf(':') + 1));
                    assertThat(services).as("scrape target host " + target).containsKey(host);
                    assertThat(port).as("ops port of " + host).isEqualTo(opsPort(host));
                    scrapedServices.add(host);
                }
            }
        }
        Set<String> expected = new TreeSet<>(sluiceServices("sender"));
        expected.addAll(sluiceServices("topology"));
        assertThat(scrapedServices).as("every long-running Sluice process is scraped").isEqualTo(expected);
        assertThat((List<String>) prom.get("rule_files")).containsExactly("/etc/prometheus/alerts.yml");
        assertThat((List<String>) services.get("prometheus").get("volumes"))
                .contains("./deploy/prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro");
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyAlertQueriesMetricsThatExistAndTheRequiredAlertsAreThere() throws IOException {
        Map<String, Object> alerts = yaml(root.resolve("deploy/prometheus/alerts.yml"));
        Map<String, String> exprs = new LinkedHashMap<>();
        for (Map<String, Object> group : (List<Map<String, Object>>) alerts.get("groups")) {
            for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
                exprs.put((String) rule.get("alert"), (String) rule.get("expr"));
                assertThat(((Map<String, Object>) rule.get("annotations"))).containsKey("summary");
            }
        }
        assertThat(exprs).containsKeys("SluiceDrainTimeOverAcceptedLateness", "SluiceBudgetNearLimit", "SluiceProvider429Share",
                "SluiceBudgetNotShared", "SluiceCriticalExpired");
        // Drain time is backlog over drain rate, not raw depth.
        assertThat(exprs.get("SluiceDrainTimeOverAcceptedLateness")).contains("sluice_sender_backlog").contains("sluice_sender_drain_rate");
        exprs.forEach((alert, expr) -> assertThat(metricNames(expr)).as(alert + ": " + expr).isNotEmpty()
                .allSatisfy(m -> assertThat(exposedMetrics).as("metric in alert " + alert).contains(m)));
    }

    @Test
    void everyDashboardQueryNamesAMetricThatExistsAndEverySignalIsShown() throws IOException {
        JsonNode dash = new ObjectMapper().readTree(root.resolve("deploy/grafana/dashboards/sluice.json").toFile());
        Map<String, Object> datasource = yaml(root.resolve("deploy/grafana/provisioning/datasources/prometheus.yml"));
        List<String> exprs = new ArrayList<>();
        for (JsonNode panel : dash.get("panels")) {
            for (JsonNode target : panel.path("targets")) {
                exprs.add(target.get("expr").asText());
                assertThat(target.path("datasource").path("uid").asText()).isEqualTo(provisionedDatasourceUid(datasource));
            }
        }
        assertThat(exprs).hasSizeGreaterThan(15);
        Set<String> used = new TreeSet<>();
        for (String expr : exprs) {
            Set<String> names = metricNames(expr);
            assertThat(names).as(expr).isNotEmpty().allSatisfy(m -> assertThat(exposedMetrics).as("metric in " + expr).contains(m));
            used.addAll(names);
        }
        for (String meter : SluiceMetrics.all()) {
            String family = meter.replace('.', '_');
            assertThat(used).as("the dashboard shows " + meter).anyMatch(u -> u.startsWith(family));
        }
    }

    @Test
    void theMetricNameExtractorSeesMetricsNotLabelsOrFunctions() {
        assertThat(metricNames("sum by (bot, scope) (rate(sluice_provider_rate_limited_total{scope=\"chat\"}[5m]))"
                + " / ignoring(scope) group_left clamp_min(sum by (bot) (rate(sluice_provider_requests_total[5m])), 0.001) > 0.01"))
                .containsExactlyInAnyOrder("sluice_provider_rate_limited_total", "sluice_provider_requests_total");
        assertThat(metricNames("histogram_quantile(0.99, sum by (le, class) (rate(sluice_delivery_lag_seconds_bucket[5m])))"))
                .containsExactly("sluice_delivery_lag_seconds_bucket");
        assertThat(exposedMetrics).doesNotContain("sluice_no_such_metric").contains("sluice_delivery_lag_seconds_bucket", "up");
    }

    @Test
    @SuppressWarnings("unchecked")
    void theInitServiceCreatesEverySluiceTopicCompactedWhereTheCodeSaysSo() {
        String script = String.join("\n", (List<String>) services.get("kafka-init").get("command"));
        Set<String> plain = new TreeSet<>();
        Set<String> compacted = new TreeSet<>();
        Matcher m = Pattern.compile("--topic (\\S+)(.*)").matcher(script);
        while (m.find()) {
            (m.group(2).contains("cleanup.policy=compact") ? compacted : plain).add(m.group(1));
        }
        Topics topics = Topics.defaults();
        assertThat(compacted).isEqualTo(new TreeSet<>(topics.compacted()));
        Set<String> expectedPlain = new TreeSet<>(topics.all());
        expectedPlain.removeAll(topics.compacted());
        assertThat(plain).isEqualTo(expectedPlain);
        for (String s : services.keySet()) {
            if ("topology".equals(process(s)) || "sender".equals(process(s))) {
                assertThat(services.get(s).get("depends_on").toString()).as(s + " waits for the topics").contains("kafka-init");
            }
        }
    }

    @Test
    void theImageRunsTheJarAndExposesTheOpsPorts() throws IOException {
        String dockerfile = Files.readString(root.resolve("Dockerfile"));
        assertThat(dockerfile).contains("FROM maven:3.9-eclipse-temurin-17 AS build", "FROM eclipse-temurin:17-jre",
                "ENTRYPOINT [\"java\",\"-jar\",\"/app/sluice.jar\"]",
                "EXPOSE " + OpsConfig.TOPOLOGY_DEFAULT_PORT + " " + OpsConfig.SENDER_DEFAULT_PORT);
    }

    // ---- helpers ----

    /** Metric names in a PromQL expression: identifiers that are not functions, label names, keywords or durations. */
    static Set<String> metricNames(String expr) {
        String s = expr.replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", "\"\"") // strings
                .replaceAll("\\{[^}]*}", "") // label matchers
                .replaceAll("\\[[^]]*]", "") // ranges
                .replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " "); // label lists
        Set<String> names = new TreeSet<>();
        Matcher m = IDENT.matcher(s);
        while (m.find()) {
            String id = m.group();
            int after = m.end();
            while (after < s.length() && s.charAt(after) == ' ') {
                after++;
            }
            boolean function = after < s.length() && s.charAt(after) == '(';
            boolean numberPart = m.start() > 0 && Character.isDigit(s.charAt(m.start() - 1));
            if (!function && !numberPart && !PROMQL_WORDS.contains(id.toLowerCase())) {
                names.add(id);
            }
        }
        return names;
    }

    /** Registers every Sluice meter (and the JVM's) in a Prometheus registry and returns the scraped family names. */
    private static Set<String> scrapeEverySluiceMeter(Set<String> bots) {
        Set<String> names = new TreeSet<>(PROMETHEUS_SYNTHETIC);
        KAFKA_METRICS_IN_ALERTS.values().forEach(names::addAll);
        try (ProcessMetrics metrics = ProcessMetrics.create("sender")) {
            SenderMetrics.bind(metrics.registry(), bots, BudgetState.SHARED);
            TopologyMetrics.bind(metrics.registry());
            for (String line : metrics.registry().scrape().split("\n")) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    names.add(line.split("[{ ]", 2)[0]);
                }
            }
        }
        return names;
    }

    private static Set<String> botIds() {
        Set<String> bots = new TreeSet<>();
        for (String name : sluiceServices("sender")) {
            env(name).keySet().forEach(var -> {
                Matcher m = Pattern.compile("SLUICE_BOT_([A-Z0-9]+)_TOKEN").matcher(var);
                if (m.matches()) {
                    bots.add(m.group(1).toLowerCase());
                }
            });
        }
        assertThat(bots).as("bots configured for the senders").isNotEmpty();
        return bots;
    }

    private static int opsPort(String service) {
        String process = process(service);
        Object configured = env(service).get("SLUICE_OPS_PORT");
        if (configured != null) {
            return Integer.parseInt(configured.toString());
        }
        return "topology".equals(process) ? OpsConfig.TOPOLOGY_DEFAULT_PORT : OpsConfig.SENDER_DEFAULT_PORT;
    }

    private static List<String> sluiceServices(String process) {
        return services.keySet().stream().filter(n -> process.equals(process(n))).sorted().toList();
    }

    /** The sluice subcommand a service runs, or null for other images. */
    @SuppressWarnings("unchecked")
    private static String process(String service) {
        Map<String, Object> s = services.get(service);
        boolean sluiceImage = "sluice:local".equals(s.get("image")) || s.containsKey("build");
        Object command = s.get("command");
        if (!sluiceImage || !(command instanceof List<?> list) || list.isEmpty()) {
            return null;
        }
        return String.valueOf(((List<Object>) list).get(0));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> env(String service) {
        Object e = services.get(service).get("environment");
        return e == null ? Map.of() : (Map<String, Object>) e;
    }

    @SuppressWarnings("unchecked")
    private static String provisionedDatasourceUid(Map<String, Object> provisioning) {
        return (String) ((List<Map<String, Object>>) provisioning.get("datasources")).get(0).get("uid");
    }

    private static Map<String, Object> yaml(Path file) throws IOException {
        try (var in = Files.newInputStream(file)) {
            return new Yaml().load(in);
        }
    }
}
