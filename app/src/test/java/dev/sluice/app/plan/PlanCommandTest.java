package dev.sluice.app.plan;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.limits.Algorithm;
import dev.sluice.limits.Evaluation;
import dev.sluice.limits.Evaluator;
import dev.sluice.limits.Rate;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPath;
import javax.xml.xpath.XPathConstants;
import javax.xml.xpath.XPathFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.NodeList;
import picocli.CommandLine;

class PlanCommandTest {

    private static final Path KAMCHATKA = Path.of("../data/usgs/kamchatka_2025-07-29T23_to_2025-07-31_m5.csv");
    private static final String MAIN_SHOCK = "2025-07-29T23:24:52.483Z";

    @TempDir
    Path tmp;

    record Run(int exitCode, String out, String err) {
    }

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cmd = new CommandLine(new PlanCommand());
        cmd.setOut(new PrintWriter(out));
        cmd.setErr(new PrintWriter(err));
        int code = cmd.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    /** The expected per-algorithm results, computed straight from the limits module. */
    private static List<Evaluation> expected(long burst) throws Exception {
        long[] instants = EventHistory.read(KAMCHATKA, "time_utc_iso").instantsMillis();
        List<Evaluation> results = new ArrayList<>();
        for (Algorithm a : Algorithm.values()) {
            results.add(Evaluator.evaluate(instants, a.create(Rate.perHour(5), burst), 3_600_000L));
        }
        return results;
    }

    @Test
    void printsTheComparisonTableForTheKamchatkaBurst() throws Exception {
        Run r = run("--events", KAMCHATKA.toString(), "--rate", "5/h");
        System.out.println(r.out());

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out()).contains("196 events").contains("max in 1h window");
        assertThat(r.out()).containsPattern("offered \\(no limit\\)\\s+196\\s+0\\s+\\d+");
        List<Evaluation> expected = expected(5);
        for (int i = 0; i < Algorithm.values().length; i++) {
            Evaluation e = expected.get(i);
            assertThat(r.out()).containsPattern(Algorithm.values()[i].label() + "\\s+" + e.admitted() + "\\s+"
                    + e.refused() + "\\s+" + e.maxInWindow() + "\\n");
        }
        assertThat(r.out()).contains("smallest lossless burst at 5/h: 74")
                .contains("worst stretch: " + MAIN_SHOCK + " .. ").contains("105 events");
    }

    @Test
    void jsonHasTheKeysAndTheSameNumbers() throws Exception {
        Run r = run("--events", KAMCHATKA.toString(), "--rate", "5/h", "--burst", "10", "--window", "6h", "--json");

        assertThat(r.exitCode()).as(r.err()).isZero();
        JsonNode json = new ObjectMapper().readTree(r.out());
        assertThat(json.get("min_lossless_burst").asLong()).isEqualTo(74);
        assertThat(json.get("worst_stretch_start").asText()).isEqualTo(MAIN_SHOCK);
        assertThat(json.get("worst_stretch_events").asInt()).isEqualTo(105);
        assertThat(json.get("events").asInt()).isEqualTo(196);
        assertThat(json.get("burst").asLong()).isEqualTo(10);
        assertThat(json.get("window_ms").asLong()).isEqualTo(6 * 3_600_000L);
        JsonNode algorithms = json.get("algorithms");
        assertThat(algorithms.size()).isEqualTo(5);
        for (Algorithm a : Algorithm.values()) {
            JsonNode node = algorithms.get(a.label());
            assertThat(node).as(a.label()).isNotNull();
            assertThat(node.get("admitted").asLong() + node.get("refused").asLong()).isEqualTo(196);
            assertThat(node.has("max_in_window")).isTrue();
        }
        // Same burst and rate: token bucket and GCRA decide identically.
        assertThat(algorithms.get("gcra")).isEqualTo(algorithms.get("token-bucket"));
        // b + r·T: at most 10 + 5·6 = 40 in any 6 hours.
        assertThat(algorithms.get("gcra").get("max_in_window").asInt()).isLessThanOrEqualTo(40);
    }

    @Test
    void chartIsAnSvgWithOneRowPerAlgorithmEventMarksALegendAndDates() throws Exception {
        Path svg = tmp.resolve("plan.svg");
        Run r = run("--events", KAMCHATKA.toString(), "--rate", "5/h", "--chart", svg.toString());

        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out()).contains("chart: " + svg);
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setNamespaceAware(true);
        Document doc = factory.newDocumentBuilder().parse(svg.toFile());
        assertThat(doc.getDocumentElement().getLocalName()).isEqualTo("svg");
        assertThat(doc.getDocumentElement().getNamespaceURI()).isEqualTo("http://www.w3.org/2000/svg");

        XPath xp = XPathFactory.newInstance().newXPath();
        NodeList rows = (NodeList) xp.evaluate("//*[local-name()='g'][@class='row']", doc, XPathConstants.NODESET);
        assertThat(rows.getLength()).isEqualTo(1 + Algorithm.values().length);
        List<Evaluation> expected = expected(5);
        for (int i = 0; i < Algorithm.values().length; i++) {
            String row = "//*[local-name()='g'][@data-algorithm='" + Algorithm.values()[i].label() + "']";
            double admitted = (Double) xp.evaluate("count(" + row + "/*[local-name()='circle'][@class='admitted'])",
                    doc, XPathConstants.NUMBER);
            double refused = (Double) xp.evaluate("count(" + row + "/*[local-name()='rect'][@class='refused'])",
                    doc, XPathConstants.NUMBER);
            assertThat((long) admitted).isEqualTo(expected.get(i).admitted());
            assertThat((long) refused).isEqualTo(expected.get(i).refused());
        }
        assertThat((Double) xp.evaluate("count(//*[local-name()='g'][@data-algorithm='offered']/*[local-name()='circle'])",
                doc, XPathConstants.NUMBER)).isEqualTo(196.0);
        assertThat(xp.evaluate("//*[local-name()='g'][@id='legend']", doc, XPathConstants.NODE)).isNotNull();
        assertThat(xp.evaluate("string(//*[local-name()='g'][@id='legend'])", doc)).contains("admitted").contains("refused");
        assertThat(xp.evaluate("//*[local-name()='rect'][@id='worst-stretch']", doc, XPathConstants.NODE)).isNotNull();
        NodeList ticks = (NodeList) xp.evaluate("//*[local-name()='text'][@class='tick']", doc, XPathConstants.NODESET);
        assertThat(ticks.getLength()).isBetween(3, 14);
        assertThat(ticks.item(0).getTextContent()).matches("\\d\\d-\\d\\d \\d\\d:\\d\\d");
    }

    @Test
    void aBadRowIsReportedWithLineFieldAndValue() throws Exception {
        Path csv = tmp.resolve("bad.csv");
        Files.writeString(csv, "time_utc_iso,magnitude,place,id\n"
                + "2025-07-29T23:05:21.056Z,5.2,\"9 km SE of Comapa, Guatemala\",a\n"
                + "yesterday,5.0,\"somewhere, far\",b\n");
        Run r = run("--events", csv.toString(), "--rate", "5/h");

        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.err()).contains("line 3").contains("time_utc_iso").contains("'yesterday'");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void aBadRateIsAUsageErrorNamingTheValue() {
        Run r = run("--events", KAMCHATKA.toString(), "--rate", "5/fortnight");

        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.err()).contains("--rate").contains("5/fortnight");
    }

    @Test
    void unsortedInputIsSortedAndTheTimeColumnIsFoundByName() throws Exception {
        Path csv = tmp.resolve("newest-first.csv");
        Files.writeString(csv, "id,when\nb,1970-01-01T00:00:01Z\na,1970-01-01T00:00:00Z\nc,1970-01-01T00:00:00.500Z\n");
        Run r = run("--events", csv.toString(), "--rate", "1/s", "--burst", "1", "--time-column", "when", "--json");

        assertThat(r.exitCode()).as(r.err()).isZero();
        JsonNode json = new ObjectMapper().readTree(r.out());
        assertThat(json.get("first_event").asText()).isEqualTo("1970-01-01T00:00:00Z");
        // 1/s, burst 1: 0 s passes, 0.5 s is refused, 1 s passes; lossless needs burst 2.
        assertThat(json.get("algorithms").get("gcra").get("refused").asInt()).isEqualTo(1);
        assertThat(json.get("min_lossless_burst").asInt()).isEqualTo(2);
    }
}
