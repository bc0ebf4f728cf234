package dev.sluice.app.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.app.demo.DemoCommand;
import dev.sluice.metrics.SluiceMetrics;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Issue 6, "done when": a demo run's {@code /metrics} shows the Sluice metrics with sensible values. Runs the
 * real {@code sluice demo} (small: 60 private chats, 1 group, 1 blocked chat, the 49 h of quakes replayed in
 * 5 s; about 40 s here) and scrapes each process's {@code /metrics} at the moment the demo prints its report,
 * i.e. after every result arrived and before anything stops. The scrapes must agree with the report.
 */
class DemoMetricsIT {
    private static final Pattern METRICS_LINE = Pattern.compile("\\[demo\\] metrics: (.*)");
    private static final Pattern URL = Pattern.compile("(\\S+) (http://\\S+/metrics)");

    @Test
    void aDemoRunsMetricsShowEverySluiceMetricWithValuesThatMatchTheReport(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("report.json");
        ScrapingTee tee = new ScrapingTee(System.out);
        PrintStream original = System.out;
        PrintStream originalErr = System.err;
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Path log = dir.resolve("demo.log");
        System.setOut(new PrintStream(tee, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        int exit;
        try {
            exit = new CommandLine(new DemoCommand()).setCaseInsensitiveEnumValuesAllowed(true).execute(
                    "--private-chats", "60", "--groups", "1", "--blocked", "1", "--replay-seconds", "5",
                    "--report-json", json.toString(), "--log-file", log.toString());
        } finally {
            System.setOut(original);
            System.setErr(originalErr);
        }
        // A quiet terminal: the demo's own lines and the report; Kafka's and the topology's logs went to the file.
        String stderr = err.toString(StandardCharsets.UTF_8);
        assertThat(stderr).as("stderr of the demo").doesNotContain(" WARN ", " INFO ", "org.apache.kafka", "Topologies:");
        int reportAt = tee.lines.indexOf("Sluice demo report");
        assertThat(reportAt).isPositive();
        List<String> ownLines = new ArrayList<>(tee.lines.subList(0, reportAt));
        tee.lines.subList(reportAt, tee.lines.size()).stream().filter(l -> l.startsWith("[demo]")).forEach(ownLines::add);
        assertThat(ownLines.size() + stderr.lines().count()).as("lines besides the report: %s", ownLines).isLessThanOrEqualTo(60);
        assertThat(tee.lines).noneMatch(l -> l.contains(" INFO ") || l.contains(" WARN "));
        assertThat(Files.readString(log)).contains("Topologies:");
        assertThat(tee.lines).anyMatch(l -> l.startsWith("    CRITICAL ") && l.contains("p50="))
                .anyMatch(l -> l.startsWith("    COLLAPSIBLE-digest ") && l.contains("p99="));
        assertThat(exit).as("demo exit code (0: every notification settled)").isZero();
        assertThat(tee.scrapes).as("scrapes taken when the report was printed").containsKeys("topology", "sender-1", "sender-2", "sender-3");
        JsonNode report = new ObjectMapper().readTree(json.toFile());
        long delivered = report.at("/results/DELIVERED").asLong();
        long blocked = report.at("/results/BLOCKED").asLong();
        assertThat(delivered).isPositive();

        // Topology: every topology metric is there, and the counters match the report.
        String topology = tee.scrapes.get("topology");
        assertThat(MetricsCheck.missing(topology, "sluice.topology.")).isEmpty();
        assertThat(MetricsCheck.sum(topology, "sluice_topology_folded_total")).isEqualTo(report.get("folded").asDouble()).isPositive();
        // The report counts digest results; a digest whose chat turned inactive while pending ends as a
        // SKIPPED_INACTIVE result (counted as skipped by the topology, not as an emitted digest).
        assertThat(MetricsCheck.sum(topology, "sluice_topology_digests_total")).isPositive()
                .isBetween(report.get("digests").asDouble() - report.get("skipped_inactive").asDouble(), report.get("digests").asDouble());
        assertThat(MetricsCheck.sum(topology, "sluice_topology_skipped_total")).isEqualTo(report.get("skipped_inactive").asDouble()).isPositive();
        // An EXPIRED result is decided by the topology (deadline passed before the outbox) or by a sender (passed
        // while the message waited for its budget, as on a loaded machine): together they are the report's count.
        double senderExpired = 0;
        for (String sender : List.of("sender-1", "sender-2", "sender-3")) {
            senderExpired += MetricsCheck.sum(tee.scrapes.get(sender), "sluice_sender_results_total", "status=\"EXPIRED\"");
        }
        assertThat(MetricsCheck.sum(topology, "sluice_topology_expired_total") + senderExpired)
                .as("EXPIRED results decided by the topology plus by the senders").isEqualTo(report.get("expired").asDouble());
        assertThat(MetricsCheck.sum(topology, "sluice_topology_dlq_total")).isEqualTo(report.get("dead_lettered").asDouble()).isZero();
        // every message the topology sent on (single notifications counted as outbound, plus digests) became
        // exactly one provider call's result
        assertThat(MetricsCheck.sum(topology, "sluice_topology_outbound_total") + MetricsCheck.sum(topology, "sluice_topology_digests_total"))
                .isEqualTo(delivered + blocked);
        assertThat(MetricsCheck.sum(topology, "sluice_topology_digest_store_size")).isGreaterThanOrEqualTo(0);
        // Kafka Streams and JVM meters are bound too
        assertThat(MetricsCheck.families(topology)).anyMatch(f -> f.startsWith("kafka_stream")).anyMatch(f -> f.startsWith("jvm_"));

        // Senders: together they wrote exactly the report's results and saw no 429.
        double senderDelivered = 0;
        double senderBlocked = 0;
        double calls = 0;
        double rateLimited = 0;
        double lagCount = 0;
        List<String> senderFamilies = new ArrayList<>();
        for (String sender : List.of("sender-1", "sender-2", "sender-3")) {
            String scrape = tee.scrapes.get(sender);
            senderDelivered += MetricsCheck.sum(scrape, "sluice_sender_results_total", "status=\"DELIVERED\"");
            senderBlocked += MetricsCheck.sum(scrape, "sluice_sender_results_total", "status=\"BLOCKED\"");
            calls += MetricsCheck.sum(scrape, "sluice_provider_requests_total");
            rateLimited += MetricsCheck.sum(scrape, "sluice_provider_rate_limited_total");
            lagCount += MetricsCheck.sum(scrape, "sluice_delivery_lag_seconds_count");
            senderFamilies.addAll(MetricsCheck.families(scrape));
            assertThat(MetricsCheck.sum(scrape, "sluice_sender_buffered_records")).as(sender + " buffered after the run").isZero();
        }
        assertThat(senderDelivered).isEqualTo(delivered);
        assertThat(senderBlocked).isEqualTo(blocked);
        assertThat(report.get("provider_429").asLong()).isZero();
        assertThat(rateLimited).isZero();
        assertThat(calls).as("provider calls: one per result, no retries needed").isEqualTo(delivered + blocked);
        assertThat(lagCount).as("due-to-sent lag recorded for every delivered message").isEqualTo(delivered);

        // Every name in SluiceMetrics that belongs to the senders is emitted by them.
        String allSenders = String.join("\n", tee.scrapes.get("sender-1"), tee.scrapes.get("sender-2"), tee.scrapes.get("sender-3"));
        List<String> senderMissing = MetricsCheck.missing(allSenders, SluiceMetrics.PREFIX).stream()
                .filter(m -> !m.startsWith("sluice.topology.")).toList();
        System.out.printf("DemoMetricsIT: delivered %d, blocked %d, folded %s, digests %s; sender families %s; "
                        + "SluiceMetrics names not yet emitted by the senders: %s%n", delivered, blocked, report.get("folded"),
                report.get("digests"), senderFamilies.stream().filter(f -> f.startsWith("sluice_")).distinct().sorted().toList(), senderMissing);
        assertThat(senderMissing).as("every sender metric in SluiceMetrics is emitted by the senders").isEmpty();
    }


    /**
     * Passes the demo's stdout through, learns the processes' /metrics URLs from its "metrics:" line, and scrapes
     * them all synchronously, on the demo's own thread, when the report header is printed: every result has
     * arrived by then and nothing has stopped yet.
     */
    private static final class ScrapingTee extends OutputStream {
        private final PrintStream through;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();
        private final Map<String, String> urls = new LinkedHashMap<>();
        final List<String> lines = new ArrayList<>();
        final Map<String, String> scrapes = new LinkedHashMap<>();
        private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

        ScrapingTee(PrintStream through) {
            this.through = through;
        }

        @Override
        public void write(int b) {
            through.write(b);
            if (b != '\n') {
                line.write(b);
                return;
            }
            String text = line.toString(StandardCharsets.UTF_8);
            line.reset();
            lines.add(text);
            Matcher m = METRICS_LINE.matcher(text);
            if (m.find()) {
                Matcher u = URL.matcher(m.group(1));
                while (u.find()) {
                    urls.put(u.group(1), u.group(2));
                }
            }
            if (text.startsWith("Sluice demo report")) {
                urls.forEach((name, url) -> {
                    try {
                        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
                                HttpResponse.BodyHandlers.ofString());
                        if (r.statusCode() == 200) {
                            scrapes.put(name, r.body());
                        }
                    } catch (Exception e) {
                        through.println("DemoMetricsIT: scraping " + url + " failed: " + e);
                    }
                });
            }
        }
    }
}
