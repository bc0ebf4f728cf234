package dev.sluice.app.report;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * A run report as one self-contained HTML page: inline SVG charts and inline CSS, no scripts, no
 * external files, so it opens anywhere and can be mailed or attached to a ticket.
 *
 * <p>Charts: provider-accepted sends per second for each bot against its limit (a dashed line), the
 * due-to-sent lag p50 and p99 over time (by send time, in windows), and results by status. The page
 * is well-formed XML (XHTML syntax) so tests can parse it.
 *
 * <p>Check it in a browser without a display:
 * {@code chromium --headless --no-sandbox --disable-gpu --window-size=1200,1800 --screenshot=report.png file:///path/report.html}
 */
public final class HtmlReport {
    /** Sends the provider accepted for one bot, and the bot's limit (Telegram Bot API FAQ: about 30/s). */
    public record BotSends(String bot, double limitPerSecond, List<Long> acceptedAtMillis) {
        public BotSends {
            Objects.requireNonNull(bot, "bot");
            acceptedAtMillis = List.copyOf(acceptedAtMillis);
        }
    }

    /** One delivered message: when it was sent and how late (due to sent), in milliseconds. */
    public record Delivery(long sentAtMillis, long lagMillis) {
    }

    private final String title;
    private final long startMillis;
    private final int lagWindowSeconds;
    private final List<BotSends> bots;
    private final List<Delivery> deliveries;
    private final Map<String, Long> results;
    private final Map<String, String> summary;

    private HtmlReport(Builder b) {
        this.title = b.title;
        this.lagWindowSeconds = b.lagWindowSeconds;
        this.bots = List.copyOf(b.bots);
        this.deliveries = List.copyOf(b.deliveries);
        this.results = new LinkedHashMap<>(b.results);
        this.summary = new LinkedHashMap<>(b.summary);
        long first = Long.MAX_VALUE;
        for (BotSends s : bots) {
            for (long t : s.acceptedAtMillis()) {
                first = Math.min(first, t);
            }
        }
        for (Delivery d : deliveries) {
            first = Math.min(first, d.sentAtMillis());
        }
        this.startMillis = b.startMillis != null ? b.startMillis : (first == Long.MAX_VALUE ? 0 : first);
    }

    public static Builder builder(String title) {
        return new Builder(title);
    }

    /** Accepted sends per whole second since the start, index = second; empty when there were none. */
    public static long[] perSecond(Collection<Long> timesMillis, long startMillis) {
        long last = -1;
        for (long t : timesMillis) {
            last = Math.max(last, Math.floorDiv(t - startMillis, 1000));
        }
        long[] counts = new long[(int) (last + 1)];
        for (long t : timesMillis) {
            long s = Math.floorDiv(t - startMillis, 1000);
            if (s >= 0) {
                counts[(int) s]++;
            }
        }
        return counts;
    }

    /** Writes the page (UTF-8), creating parent directories. */
    public void write(Path file) {
        try {
            if (file.toAbsolutePath().getParent() != null) {
                Files.createDirectories(file.toAbsolutePath().getParent());
            }
            Files.writeString(file, html(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the HTML report to " + file + ": " + e.getMessage(), e);
        }
    }

    /** The page. */
    public String html() {
        StringBuilder h = new StringBuilder(64 * 1024);
        h.append("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
                .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>").append(esc(title)).append("</title>\n")
                .append("<style>\n")
                .append("body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:24px auto;max-width:1100px;color:#1d2430;background:#fff}\n")
                .append("h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px}p.note{color:#5a6372;font-size:13px;margin:2px 0 10px}\n")
                .append("table.summary{border-collapse:collapse;font-size:13px}table.summary td{padding:3px 14px 3px 0;border-bottom:1px solid #eceef2}\n")
                .append("td.k{color:#5a6372}td.v{font-variant-numeric:tabular-nums;font-weight:600}\n")
                .append("svg{display:block;margin:6px 0 4px;background:#fbfcfd;border:1px solid #e3e6ea;border-radius:4px}\n")
                .append("svg text{font-family:inherit;font-size:11px;fill:#5a6372}svg text.label{fill:#1d2430;font-size:12px}\n")
                .append("</style>\n</head>\n<body>\n");
        h.append("<h1>").append(esc(title)).append("</h1>\n");
        if (!summary.isEmpty()) {
            h.append("<table class=\"summary\">\n");
            summary.forEach((k, v) -> h.append("<tr><td class=\"k\">").append(esc(k)).append("</td><td class=\"v\">").append(esc(v)).append("</td></tr>\n"));
            h.append("</table>\n");
        }
        for (BotSends b : bots) {
            long[] counts = perSecond(b.acceptedAtMillis(), startMillis);
            long max = Arrays.stream(counts).max().orElse(0);
            h.append("<h2>Sends accepted per second: bot ").append(esc(b.bot())).append("</h2>\n")
                    .append("<p class=\"note\">What the provider accepted in each whole second; the dashed line is the limit (")
                    .append(fmt(b.limitPerSecond())).append("/s). Peak: ").append(max).append("/s.</p>\n");
            h.append(sendChart(b, counts));
        }
        h.append("<h2>Lag, due to sent</h2>\n<p class=\"note\">p50 and p99 of delivered messages, by send time in ")
                .append(lagWindowSeconds).append(" s windows.</p>\n");
        h.append(lagChart());
        h.append("<h2>Results by status</h2>\n<p class=\"note\">Every notification ends as exactly one result.</p>\n");
        h.append(resultsChart());
        h.append("</body>\n</html>\n");
        return h.toString();
    }

    // ---- charts ----

    private static final int W = 1060;
    private static final int H = 280;
    private static final int LEFT = 56;
    private static final int RIGHT = 16;
    private static final int TOP = 20;
    private static final int BOTTOM = 34;

    private String sendChart(BotSends b, long[] counts) {
        double yMax = niceCeil(Math.max(b.limitPerSecond() * 1.25, Arrays.stream(counts).max().orElse(0) * 1.1));
        int seconds = Math.max(counts.length, 1);
        Plot p = new Plot(seconds, yMax);
        StringBuilder s = p.open("sends-" + b.bot(), "seconds since start", "msgs/s");
        double barW = Math.max(1.0, (double) (W - LEFT - RIGHT) / seconds - 1);
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] == 0) {
                continue;
            }
            double x = p.x(i);
            double y = p.y(counts[i]);
            String color = counts[i] > b.limitPerSecond() ? "#d64545" : "#3b7dd8";
            s.append(String.format(Locale.ROOT, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>second %d: %d</title></rect>\n",
                    x, y, barW, p.y(0) - y, color, i, counts[i]));
        }
        double ly = p.y(b.limitPerSecond());
        s.append(String.format(Locale.ROOT, "<line class=\"limit\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#d64545\" stroke-width=\"2\" stroke-dasharray=\"6 4\"/>\n",
                LEFT, ly, W - RIGHT, ly));
        s.append(String.format(Locale.ROOT, "<text class=\"label\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">limit %s/s</text>\n",
                W - RIGHT - 4, ly - 5, fmt(b.limitPerSecond())));
        return s.append("</svg>\n").toString();
    }

    private String lagChart() {
        List<double[]> windows = lagWindows(); // {startSecond, p50 s, p99 s}
        if (windows.isEmpty()) {
            return "<p class=\"note\">No deliveries.</p>\n";
        }
        double last = windows.get(windows.size() - 1)[0] + lagWindowSeconds;
        double yMax = niceCeil(windows.stream().mapToDouble(w -> w[2]).max().orElse(1) * 1.1);
        Plot p = new Plot(Math.max(last, 1), Math.max(yMax, 0.001));
        StringBuilder s = p.open("lag", "seconds since start (send time)", "lag, s");
        s.append(polyline("p50", windows, 1, p, "#3b7dd8"));
        s.append(polyline("p99", windows, 2, p, "#e08a1e"));
        s.append("<text class=\"label\" x=\"").append(W - RIGHT - 110).append("\" y=\"").append(TOP + 14)
                .append("\" style=\"fill:#3b7dd8\">— p50</text>\n<text class=\"label\" x=\"").append(W - RIGHT - 60).append("\" y=\"")
                .append(TOP + 14).append("\" style=\"fill:#e08a1e\">— p99</text>\n");
        return s.append("</svg>\n").toString();
    }

    private String polyline(String name, List<double[]> windows, int idx, Plot p, String color) {
        StringBuilder pts = new StringBuilder();
        for (double[] w : windows) {
            pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", p.x(w[0] + lagWindowSeconds / 2.0), p.y(w[idx])));
        }
        return "<polyline class=\"" + name + "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"2\" points=\""
                + pts.toString().trim() + "\"/>\n";
    }

    /** Lag percentiles per window of send time (nearest-rank). */
    List<double[]> lagWindows() {
        Map<Long, List<Long>> byWindow = new java.util.TreeMap<>();
        for (Delivery d : deliveries) {
            long w = Math.floorDiv(d.sentAtMillis() - startMillis, 1000L * lagWindowSeconds);
            byWindow.computeIfAbsent(w, k -> new ArrayList<>()).add(Math.max(0, d.lagMillis()));
        }
        List<double[]> out = new ArrayList<>();
        byWindow.forEach((w, lags) -> {
            lags.sort(null);
            out.add(new double[] {w * lagWindowSeconds, rank(lags, 0.50) / 1000.0, rank(lags, 0.99) / 1000.0});
        });
        return out;
    }

    private static long rank(List<Long> sorted, double q) {
        int i = (int) Math.ceil(q * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i)));
    }

    private String resultsChart() {
        if (results.isEmpty()) {
            return "<p class=\"note\">No results.</p>\n";
        }
        int rowH = 26;
        int h = results.size() * rowH + 20;
        long max = results.values().stream().mapToLong(Long::longValue).max().orElse(1);
        StringBuilder s = new StringBuilder();
        s.append("<svg id=\"results\" xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(W).append("\" height=\"").append(h)
                .append("\" viewBox=\"0 0 ").append(W).append(' ').append(h).append("\" role=\"img\">\n");
        int y = 10;
        for (Map.Entry<String, Long> e : results.entrySet()) {
            double w = max == 0 ? 0 : (W - 260.0) * e.getValue() / max;
            s.append("<text class=\"label\" x=\"150\" y=\"").append(y + 16).append("\" text-anchor=\"end\">").append(esc(e.getKey())).append("</text>\n");
            s.append(String.format(Locale.ROOT, "<rect class=\"status\" x=\"160\" y=\"%d\" width=\"%.1f\" height=\"18\" fill=\"%s\"/>\n",
                    y + 3, w, statusColor(e.getKey())));
            s.append(String.format(Locale.ROOT, "<text class=\"label\" x=\"%.1f\" y=\"%d\">%d</text>\n", 166 + w, y + 16, e.getValue()));
            y += rowH;
        }
        return s.append("</svg>\n").toString();
    }

    private static String statusColor(String status) {
        return switch (status) {
            case "DELIVERED" -> "#3ba55c";
            case "BLOCKED", "SKIPPED_INACTIVE" -> "#8a94a6";
            case "EXPIRED", "FAILED" -> "#d64545";
            case "UNCERTAIN" -> "#e08a1e";
            default -> "#3b7dd8";
        };
    }

    /** Axes and scales of one x/y chart. */
    private static final class Plot {
        final double xMax;
        final double yMax;

        Plot(double xMax, double yMax) {
            this.xMax = xMax;
            this.yMax = yMax;
        }

        double x(double v) {
            return LEFT + (W - LEFT - RIGHT) * v / xMax;
        }

        double y(double v) {
            return TOP + (H - TOP - BOTTOM) * (1 - v / yMax);
        }

        StringBuilder open(String id, String xLabel, String yLabel) {
            StringBuilder s = new StringBuilder();
            s.append("<svg id=\"").append(esc(id)).append("\" xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(W)
                    .append("\" height=\"").append(H).append("\" viewBox=\"0 0 ").append(W).append(' ').append(H).append("\" role=\"img\">\n");
            for (int i = 0; i <= 4; i++) {
                double v = yMax * i / 4;
                double y = y(v);
                s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e3e6ea\"/>\n", LEFT, y, W - RIGHT, y));
                s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", LEFT - 6, y + 4, fmt(v)));
            }
            for (int i = 0; i <= 10; i++) {
                double v = xMax * i / 10;
                s.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x(v), H - BOTTOM + 16, fmt(v)));
            }
            s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#8a94a6\"/>\n", LEFT, y(0), W - RIGHT, y(0)));
            s.append("<text x=\"").append((LEFT + W - RIGHT) / 2).append("\" y=\"").append(H - 4).append("\" text-anchor=\"middle\">")
                    .append(esc(xLabel)).append("</text>\n");
            s.append("<text x=\"").append(LEFT + 6).append("\" y=\"").append(TOP - 4).append("\" text-anchor=\"start\">").append(esc(yLabel)).append("</text>\n");
            return s;
        }
    }

    private static double niceCeil(double v) {
        if (v <= 0) {
            return 1;
        }
        double mag = Math.pow(10, Math.floor(Math.log10(v)));
        for (double step : new double[] {1, 2, 2.5, 5, 10}) {
            if (step * mag >= v) {
                return step * mag;
            }
        }
        return 10 * mag;
    }

    private static String fmt(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : String.format(Locale.ROOT, "%.2f", v).replaceAll("0+$", "");
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    /** Fills the report model. */
    public static final class Builder {
        private final String title;
        private Long startMillis;
        private int lagWindowSeconds = 5;
        private final List<BotSends> bots = new ArrayList<>();
        private final List<Delivery> deliveries = new ArrayList<>();
        private final Map<String, Long> results = new LinkedHashMap<>();
        private final Map<String, String> summary = new LinkedHashMap<>();

        private Builder(String title) {
            this.title = Objects.requireNonNull(title, "title");
        }

        /** Time zero of the x axes (default: the first send). */
        public Builder startedAtMillis(long epochMillis) {
            this.startMillis = epochMillis;
            return this;
        }

        /** Width of the lag percentile windows (default 5 s). */
        public Builder lagWindowSeconds(int seconds) {
            if (seconds <= 0) {
                throw new IllegalArgumentException("lag window must be > 0 s, was " + seconds);
            }
            this.lagWindowSeconds = seconds;
            return this;
        }

        public Builder bot(String bot, double limitPerSecond, Collection<Long> acceptedAtMillis) {
            bots.add(new BotSends(bot, limitPerSecond, new ArrayList<>(acceptedAtMillis)));
            return this;
        }

        public Builder delivery(long sentAtMillis, long lagMillis) {
            deliveries.add(new Delivery(sentAtMillis, lagMillis));
            return this;
        }

        /**
         * Adds every result: the count per status, and the lag (due_at to sent_at) of each DELIVERED
         * result that carries both times.
         */
        public Builder results(Collection<DeliveryResult> deliveryResults) {
            for (DeliveryResult r : deliveryResults) {
                results.merge(r.getStatus().name(), 1L, Long::sum);
                if (r.getStatus() == DeliveryStatus.DELIVERED && r.getDueAt() != null && r.getSentAt() != null) {
                    delivery(r.getSentAt().toEpochMilli(), r.getSentAt().toEpochMilli() - r.getDueAt().toEpochMilli());
                }
            }
            return this;
        }

        public Builder results(Map<String, Long> countByStatus) {
            results.putAll(countByStatus);
            return this;
        }

        /** A line of the summary table (e.g. "provider_429" → "0"). */
        public Builder summary(String key, Object value) {
            summary.put(key, String.valueOf(value));
            return this;
        }

        public HtmlReport build() {
            return new HtmlReport(this);
        }
    }
}
