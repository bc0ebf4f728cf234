package dev.sluice.app.plan;

import dev.sluice.limits.Algorithm;
import dev.sluice.limits.CapacityPlan;
import dev.sluice.limits.Durations;
import dev.sluice.limits.Evaluation;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/** The comparison table of {@code sluice plan}. */
final class PlanText {

    private PlanText() {
    }

    static void print(PlanReport report, PrintWriter out) {
        long[] t = report.history().instantsMillis();
        out.printf("%d events from %s", t.length, report.history().source());
        if (t.length > 0) {
            out.printf(" (%s .. %s)", Instant.ofEpochMilli(t[0]), Instant.ofEpochMilli(t[t.length - 1]));
        }
        out.println();
        String window = Durations.format(report.windowMillis());
        out.printf("rate %s, burst %d (token bucket, GCRA); window algorithms: %d per %s%n", report.rate(),
                report.burst(), report.rate().count(), Durations.format(report.rate().periodMillis()));
        out.println();
        String maxHeader = "max in " + window + " window";
        out.printf("%-24s %9s %9s %18s%n", "algorithm", "admitted", "refused", maxHeader);
        out.printf("%-24s %9d %9d %18d%n", "offered (no limit)", t.length, 0, report.offeredMaxInWindow());
        for (Map.Entry<Algorithm, Evaluation> e : report.results().entrySet()) {
            Evaluation ev = e.getValue();
            out.printf("%-24s %9d %9d %18d%n", e.getKey().label(), ev.admitted(), ev.refused(), ev.maxInWindow());
        }
        out.println();
        CapacityPlan plan = report.plan();
        out.printf("smallest lossless burst at %s: %d (token bucket or GCRA refuse nothing)%n",
                report.rate(), plan.minLosslessBurst());
        if (plan.worstEvents() > 0) {
            out.printf("worst stretch: %s .. %s, %d events in %s%n", Instant.ofEpochMilli(plan.worstStartMillis()),
                    Instant.ofEpochMilli(plan.worstEndMillis()), plan.worstEvents(),
                    human(plan.worstEndMillis() - plan.worstStartMillis()));
        }
        out.flush();
    }

    /** {@code 6h12m}, {@code 3d4h}, {@code 42s}. */
    static String human(long millis) {
        Duration d = Duration.ofMillis(millis);
        if (d.toDays() > 0) {
            return d.toDays() + "d" + d.toHoursPart() + "h";
        }
        if (d.toHours() > 0) {
            return d.toHours() + "h" + d.toMinutesPart() + "m";
        }
        if (d.toMinutes() > 0) {
            return d.toMinutes() + "m" + d.toSecondsPart() + "s";
        }
        return d.toSeconds() + "." + String.format("%03d", d.toMillisPart()) + "s";
    }
}
