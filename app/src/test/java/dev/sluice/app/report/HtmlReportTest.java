package dev.sluice.app.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import java.io.StringReader;
import java.time.Instant;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPath;
import javax.xml.xpath.XPathConstants;
import javax.xml.xpath.XPathFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

class HtmlReportTest {
    static final long T0 = 1_753_833_600_000L; // 2025-07-30T00:00:00Z

    /** 60 s at 28/s, second 30 at 35/s (over the 30/s limit); lag grows from 0.1 s to 6 s. */
    static HtmlReport sample() {
        List<Long> accepted = new ArrayList<>();
        HtmlReport.Builder b = HtmlReport.builder("Sluice demo <budget=redis>").startedAtMillis(T0).lagWindowSeconds(5);
        for (int s = 0; s < 60; s++) {
            int n = s == 30 ? 35 : 28;
            for (int i = 0; i < n; i++) {
                long t = T0 + s * 1000L + i * (1000L / n);
                accepted.add(t);
                b.delivery(t, 100 + s * 100L + i);
            }
        }
        Map<String, Long> results = new LinkedHashMap<>();
        results.put("DELIVERED", 1687L);
        results.put("BLOCKED", 5L);
        results.put("EXPIRED", 2L);
        return b.bot("quakes", 30, accepted).results(results)
                .summary("provider_429", 0).summary("max_bot_msgs_per_1s", 35).build();
    }

    @Test
    void perSecondCountsWholeSecondsFromTheStart() {
        assertThat(HtmlReport.perSecond(List.of(T0, T0 + 999, T0 + 1000, T0 + 2500), T0)).containsExactly(2, 1, 1);
        assertThat(HtmlReport.perSecond(List.of(), T0)).isEmpty();
    }

    @Test
    void thePageParsesAndShowsSendsAgainstTheLimitLagAndResults(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("report/run.html");
        sample().write(file);
        String html = Files.readString(file);
        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(new InputSource(new StringReader(html)));
        XPath x = XPathFactory.newInstance().newXPath();

        assertThat(x.evaluate("//*[local-name()='title']", doc)).isEqualTo("Sluice demo <budget=redis>");
        NodeList svgs = (NodeList) x.evaluate("//*[local-name()='svg']", doc, XPathConstants.NODESET);
        assertThat(svgs.getLength()).isEqualTo(3);

        // Sends chart: one bar per second, the over-limit second in red, the limit line at 30 on a 0..50 axis.
        NodeList bars = (NodeList) x.evaluate("//*[@id='sends-quakes']/*[@class='bar']", doc, XPathConstants.NODESET);
        assertThat(bars.getLength()).isEqualTo(60);
        assertThat(x.evaluate("count(//*[@id='sends-quakes']/*[@class='bar'][@fill='#d64545'])", doc)).isEqualTo("1");
        Element limit = (Element) x.evaluate("//*[@id='sends-quakes']/*[@class='limit']", doc, XPathConstants.NODE);
        assertThat(limit.getAttribute("y1")).isEqualTo("110.4"); // TOP 20 + 226 * (1 - 30/50)
        assertThat(html).contains("limit 30/s").contains("Peak: 35/s");

        // Lag chart: 12 windows of 5 s, p99 above p50 in every window.
        String p50 = x.evaluate("//*[@id='lag']/*[@class='p50']/@points", doc);
        String p99 = x.evaluate("//*[@id='lag']/*[@class='p99']/@points", doc);
        assertThat(p50.split(" ")).hasSize(12);
        String[] a = p50.split(" ");
        String[] b = p99.split(" ");
        for (int i = 0; i < a.length; i++) {
            double y50 = Double.parseDouble(a[i].split(",")[1]);
            double y99 = Double.parseDouble(b[i].split(",")[1]);
            assertThat(y99).as("window %d: p99 drawn above p50 (smaller y)", i).isLessThanOrEqualTo(y50);
        }

        // Results: one bar per status.
        assertThat(x.evaluate("count(//*[@id='results']/*[@class='status'])", doc)).isEqualTo("3");

        // Self-contained: no scripts, no external references.
        assertThat(x.evaluate("count(//*[local-name()='script'] | //*[local-name()='link'] | //*[local-name()='img'])", doc)).isEqualTo("0");
        assertThat(html).doesNotContain("src=").doesNotContain("href=").doesNotContain("url(");
    }

    @Test
    void deliveryResultsGiveStatusCountsAndLagOfDeliveredOnes() {
        List<DeliveryResult> rs = List.of(
                result(DeliveryStatus.DELIVERED, 1_000, 1_400),
                result(DeliveryStatus.DELIVERED, 2_000, 2_100),
                result(DeliveryStatus.BLOCKED, 3_000, 3_050));
        HtmlReport r = HtmlReport.builder("t").startedAtMillis(0).lagWindowSeconds(10).results(rs).build();
        assertThat(r.lagWindows()).hasSize(1);
        assertThat(r.lagWindows().get(0)).containsExactly(0, 0.1, 0.4);
        assertThat(r.html()).contains(">DELIVERED</text>").contains(">BLOCKED</text>");
    }

    private static DeliveryResult result(DeliveryStatus status, long dueMillis, long sentMillis) {
        DeliveryResult r = new DeliveryResult();
        r.setStatus(status);
        r.setDueAt(Instant.ofEpochMilli(dueMillis));
        r.setSentAt(Instant.ofEpochMilli(sentMillis));
        return r;
    }

    @Test
    void lagPercentilesAreNearestRankPerWindow() {
        HtmlReport r = HtmlReport.builder("t").startedAtMillis(0).lagWindowSeconds(10)
                .delivery(1_000, 100).delivery(2_000, 200).delivery(3_000, 300).delivery(4_000, 10_000)
                .delivery(12_000, 50).build();
        List<double[]> w = r.lagWindows();
        assertThat(w).hasSize(2);
        assertThat(w.get(0)).containsExactly(0, 0.2, 10.0);
        assertThat(w.get(1)).containsExactly(10, 0.05, 0.05);
    }
}
