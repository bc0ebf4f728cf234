package dev.sluice.app.plan;

import dev.sluice.limits.Algorithm;
import dev.sluice.limits.CapacityPlan;
import dev.sluice.limits.Evaluation;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Draws {@code sluice plan --chart}: the stream on a time line, one row for the offered events and
 * one per algorithm, admitted events as green circles above the row's line and refused ones as red
 * squares below it, the worst stretch shaded across all rows, a legend and a UTC date axis.
 *
 * <p>Structure (for tools and tests): root {@code <svg>}; {@code <g id="legend">}; one
 * {@code <g class="row" data-algorithm="...">} per row ({@code offered} first) holding
 * {@code <circle class="admitted">} and {@code <rect class="refused">}; {@code <rect id="worst-stretch">};
 * {@code <g id="axis">} with {@code <text class="tick">} labels.
 */
final class SvgChart {

    private static final int WIDTH = 1200;
    private static final int LEFT = 200;
    private static final int RIGHT = 30;
    private static final int ROWS_TOP = 96;
    private static final int ROW_HEIGHT = 56;
    private static final int TOOLTIP_LIMIT = 1_000;
    private static final String GREEN = "#2a9d4b";
    private static final String RED = "#d62828";

    private SvgChart() {
    }

    static String render(PlanReport report) {
        long[] t = report.history().instantsMillis();
        long t0 = t.length == 0 ? 0 : t[0];
        long t1 = t.length == 0 ? 1 : t[t.length - 1];
        if (t1 == t0) {
            t0 -= 30_000;
            t1 += 30_000;
        }
        Scale x = new Scale(t0, t1, LEFT, WIDTH - RIGHT);
        int rows = report.results().size() + 1;
        int axisY = ROWS_TOP + rows * ROW_HEIGHT + 6;
        int height = axisY + 52;

        StringBuilder svg = new StringBuilder(64 + t.length * rows * 60);
        svg.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        svg.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(WIDTH).append("\" height=\"")
                .append(height).append("\" viewBox=\"0 0 ").append(WIDTH).append(' ').append(height)
                .append("\" font-family=\"sans-serif\" font-size=\"12\">\n");
        svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        CapacityPlan plan = report.plan();
        text(svg, 12, 24, "title", "font-size=\"16\" font-weight=\"bold\"",
                "sluice plan: " + report.history().source() + " (" + t.length + " events), rate " + report.rate()
                        + ", burst " + report.burst());
        String stretch = plan.worstEvents() == 0 ? "" : "; worst stretch " + Instant.ofEpochMilli(plan.worstStartMillis())
                + " .. " + Instant.ofEpochMilli(plan.worstEndMillis()) + " (" + plan.worstEvents() + " events)";
        text(svg, 12, 44, "subtitle", "fill=\"#444\"",
                "smallest lossless burst at " + report.rate() + ": " + plan.minLosslessBurst() + stretch);
        legend(svg, 12, 66);

        if (plan.worstEvents() > 0) {
            double xa = x.at(plan.worstStartMillis());
            double w = Math.max(3, x.at(plan.worstEndMillis()) - xa);
            svg.append("<rect id=\"worst-stretch\" x=\"").append(fmt(xa - 1)).append("\" y=\"").append(ROWS_TOP)
                    .append("\" width=\"").append(fmt(w + 2)).append("\" height=\"").append(rows * ROW_HEIGHT)
                    .append("\" fill=\"#f4a261\" fill-opacity=\"0.3\"><title>worst stretch: ")
                    .append(plan.worstEvents()).append(" events</title></rect>\n");
        }

        boolean[] all = new boolean[t.length];
        java.util.Arrays.fill(all, true);
        row(svg, 0, "offered", "offered (no limit)", t.length + " events", t, all, x);
        int i = 1;
        for (Map.Entry<Algorithm, Evaluation> e : report.results().entrySet()) {
            Evaluation ev = e.getValue();
            row(svg, i++, e.getKey().label(), e.getKey().label(),
                    ev.admitted() + " admitted, " + ev.refused() + " refused", t, ev.admittedFlags(), x);
        }
        axis(svg, x, axisY);
        svg.append("</svg>\n");
        return svg.toString();
    }

    private static void legend(StringBuilder svg, int x, int y) {
        svg.append("<g id=\"legend\">\n");
        svg.append("<circle class=\"legend-admitted\" cx=\"").append(x + 5).append("\" cy=\"").append(y - 4)
                .append("\" r=\"4\" fill=\"").append(GREEN).append("\"/>\n");
        text(svg, x + 14, y, "legend-label", "", "admitted");
        svg.append("<rect class=\"legend-refused\" x=\"").append(x + 86).append("\" y=\"").append(y - 8)
                .append("\" width=\"8\" height=\"8\" fill=\"").append(RED).append("\"/>\n");
        text(svg, x + 100, y, "legend-label", "", "refused");
        svg.append("<rect class=\"legend-worst\" x=\"").append(x + 170).append("\" y=\"").append(y - 10)
                .append("\" width=\"22\" height=\"12\" fill=\"#f4a261\" fill-opacity=\"0.3\"/>\n");
        text(svg, x + 198, y, "legend-label", "", "worst stretch (sets the smallest lossless burst)");
        svg.append("</g>\n");
    }

    private static void row(StringBuilder svg, int index, String id, String label, String summary, long[] t,
                            boolean[] admitted, Scale x) {
        int top = ROWS_TOP + index * ROW_HEIGHT;
        int mid = top + ROW_HEIGHT / 2;
        svg.append("<g class=\"row\" data-algorithm=\"").append(esc(id)).append("\">\n");
        svg.append("<rect class=\"row-background\" x=\"0\" y=\"").append(top).append("\" width=\"").append(WIDTH)
                .append("\" height=\"").append(ROW_HEIGHT).append("\" fill=\"").append(index % 2 == 0 ? "#f6f6f6" : "#ffffff")
                .append("\" fill-opacity=\"0.6\"/>\n");
        text(svg, 12, mid - 3, "row-label", "font-weight=\"bold\"", label);
        text(svg, 12, mid + 13, "row-summary", "fill=\"#555\" font-size=\"11\"", summary);
        svg.append("<line x1=\"").append(LEFT).append("\" x2=\"").append(WIDTH - RIGHT).append("\" y1=\"").append(mid)
                .append("\" y2=\"").append(mid).append("\" stroke=\"#bbb\"/>\n");
        boolean tooltips = t.length <= TOOLTIP_LIMIT;
        for (int k = 0; k < t.length; k++) {
            String cx = fmt(x.at(t[k]));
            if (admitted[k]) {
                svg.append("<circle class=\"admitted\" cx=\"").append(cx).append("\" cy=\"").append(mid - 9)
                        .append("\" r=\"3.5\" fill=\"").append(GREEN).append("\" fill-opacity=\"0.55\"");
            } else {
                svg.append("<rect class=\"refused\" x=\"").append(fmt(x.at(t[k]) - 3)).append("\" y=\"").append(mid + 5)
                        .append("\" width=\"6\" height=\"6\" fill=\"").append(RED).append("\" fill-opacity=\"0.55\"");
            }
            if (tooltips) {
                svg.append("><title>").append(Instant.ofEpochMilli(t[k])).append(admitted[k] ? " admitted" : " refused")
                        .append("</title></").append(admitted[k] ? "circle" : "rect").append(">\n");
            } else {
                svg.append("/>\n");
            }
        }
        svg.append("</g>\n");
    }

    private static void axis(StringBuilder svg, Scale x, int y) {
        svg.append("<g id=\"axis\">\n");
        svg.append("<line x1=\"").append(LEFT).append("\" x2=\"").append(WIDTH - RIGHT).append("\" y1=\"").append(y)
                .append("\" y2=\"").append(y).append("\" stroke=\"#333\"/>\n");
        for (Tick tick : ticks(x.t0, x.t1)) {
            double px = x.at(tick.millis);
            svg.append("<line x1=\"").append(fmt(px)).append("\" x2=\"").append(fmt(px)).append("\" y1=\"").append(ROWS_TOP)
                    .append("\" y2=\"").append(y + 5).append("\" stroke=\"#ddd\" stroke-width=\"0.8\"/>\n");
            svg.append("<text class=\"tick\" x=\"").append(fmt(px)).append("\" y=\"").append(y + 18)
                    .append("\" text-anchor=\"middle\" fill=\"#333\">").append(esc(tick.label)).append("</text>\n");
        }
        text(svg, LEFT, y + 40, "axis-caption", "fill=\"#555\"", "time (UTC), " + Instant.ofEpochMilli(x.t0)
                + " .. " + Instant.ofEpochMilli(x.t1));
        svg.append("</g>\n");
    }

    record Tick(long millis, String label) {
    }

    /** About 4 to 12 ticks on round UTC instants: minutes, hours, days, months or years. */
    static List<Tick> ticks(long t0, long t1) {
        long span = t1 - t0;
        long minute = 60_000L;
        long hour = 60 * minute;
        long day = 24 * hour;
        long[] steps = {minute, 5 * minute, 15 * minute, 30 * minute, hour, 2 * hour, 3 * hour, 6 * hour, 12 * hour,
            day, 2 * day, 7 * day, 14 * day};
        List<Tick> ticks = new ArrayList<>();
        for (long step : steps) {
            if (span / step <= 10) {
                DateTimeFormatter f = DateTimeFormatter.ofPattern(step < day ? "MM-dd HH:mm" : "yyyy-MM-dd")
                        .withZone(ZoneOffset.UTC);
                for (long m = Math.floorDiv(t0, step) * step + step; m <= t1; m += step) {
                    ticks.add(new Tick(m, f.format(Instant.ofEpochMilli(m))));
                }
                return ticks;
            }
        }
        long months = span / (30 * day);
        int every = months <= 12 ? 1 : months <= 36 ? 3 : months <= 72 ? 6 : 12;
        DateTimeFormatter f = DateTimeFormatter.ofPattern(every == 12 ? "yyyy" : "yyyy-MM").withZone(ZoneOffset.UTC);
        ZonedDateTime first = Instant.ofEpochMilli(t0).atZone(ZoneOffset.UTC);
        LocalDate d = LocalDate.of(first.getYear(), 1, 1);
        for (; ; d = d.plusMonths(every)) {
            long m = d.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
            if (m > t1) {
                break;
            }
            if (m > t0) {
                ticks.add(new Tick(m, f.format(Instant.ofEpochMilli(m))));
            }
        }
        return ticks;
    }

    private static void text(StringBuilder svg, int x, int y, String cls, String attrs, String content) {
        svg.append("<text class=\"").append(cls).append("\" x=\"").append(x).append("\" y=\"").append(y).append('"');
        if (!attrs.isEmpty()) {
            svg.append(' ').append(attrs);
        }
        svg.append('>').append(esc(content)).append("</text>\n");
    }

    static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    private static String fmt(double v) {
        return String.format(java.util.Locale.ROOT, "%.1f", v);
    }

    /** Maps epoch ms to x pixels. */
    private static final class Scale {
        final long t0;
        final long t1;
        final double x0;
        final double x1;

        Scale(long t0, long t1, double x0, double x1) {
            this.t0 = t0;
            this.t1 = t1;
            this.x0 = x0;
            this.x1 = x1;
        }

        double at(long millis) {
            return x0 + (x1 - x0) * (double) (millis - t0) / (double) (t1 - t0);
        }
    }
}
