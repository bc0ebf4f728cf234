package dev.sluice.app.ops;

import dev.sluice.metrics.SluiceMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads a Prometheus scrape and tells which Sluice metrics it lacks, e.g. for a test that scrapes a
 * demo run's {@code /metrics} ("every metric above shows up").
 */
public final class MetricsCheck {
    private MetricsCheck() {
    }

    /** Metric family names in a Prometheus text scrape ({@code sluice_sender_results_total}, ...). */
    public static Set<String> families(String prometheusText) {
        Set<String> names = new TreeSet<>();
        for (String line : prometheusText.split("\n")) {
            if (!line.isBlank() && !line.startsWith("#")) {
                names.add(line.split("[{ ]", 2)[0]);
            }
        }
        return names;
    }

    /**
     * The Sluice meters ({@link SluiceMetrics#all()}) of which no series appears in the scrape.
     *
     * @param prefix only meters whose Micrometer name starts with this, e.g. {@code sluice.topology.} or
     *               {@code sluice.} for all
     */
    public static List<String> missing(String prometheusText, String prefix) {
        Set<String> families = families(prometheusText);
        List<String> missing = new ArrayList<>();
        for (String meter : SluiceMetrics.all()) {
            if (!meter.startsWith(prefix)) {
                continue;
            }
            String base = meter.replace('.', '_');
            if (families.stream().noneMatch(f -> f.equals(base) || f.startsWith(base + "_"))) {
                missing.add(meter);
            }
        }
        return missing;
    }

    /** Sum of the samples of {@code family} (Prometheus text) whose labels contain every {@code labels} part. */
    public static double sum(String prometheusText, String family, String... labels) {
        double total = 0;
        for (String line : prometheusText.split("\n")) {
            if (line.startsWith("#") || !(line.startsWith(family + "{") || line.startsWith(family + " "))) {
                continue;
            }
            boolean all = true;
            for (String l : labels) {
                all &= line.contains(l);
            }
            if (all) {
                total += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return total;
    }
}
