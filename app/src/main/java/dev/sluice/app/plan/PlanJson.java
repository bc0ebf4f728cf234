package dev.sluice.app.plan;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.limits.Algorithm;
import dev.sluice.limits.CapacityPlan;
import dev.sluice.limits.Evaluation;
import java.time.Instant;
import java.util.Map;

/**
 * The JSON form of {@code sluice plan --json}. Keys (snake_case): {@code events_file}, {@code events},
 * {@code first_event}, {@code last_event}, {@code rate}, {@code rate_count}, {@code rate_period_ms},
 * {@code burst}, {@code window_ms}, {@code offered_max_in_window}, {@code min_lossless_burst},
 * {@code worst_stretch_start}, {@code worst_stretch_end} (ISO-8601 instants),
 * {@code worst_stretch_events}, and {@code algorithms}: an object keyed by algorithm label
 * ({@code fixed-window}, {@code sliding-log}, {@code sliding-window-counter}, {@code token-bucket},
 * {@code gcra}) with {@code admitted}, {@code refused}, {@code max_in_window}.
 */
final class PlanJson {

    private static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private PlanJson() {
    }

    static ObjectNode toJson(PlanReport report) {
        long[] t = report.history().instantsMillis();
        ObjectNode root = MAPPER.createObjectNode();
        root.put("events_file", report.history().source());
        root.put("events", t.length);
        root.put("first_event", t.length == 0 ? null : Instant.ofEpochMilli(t[0]).toString());
        root.put("last_event", t.length == 0 ? null : Instant.ofEpochMilli(t[t.length - 1]).toString());
        root.put("rate", report.rate().toString());
        root.put("rate_count", report.rate().count());
        root.put("rate_period_ms", report.rate().periodMillis());
        root.put("burst", report.burst());
        root.put("window_ms", report.windowMillis());
        root.put("offered_max_in_window", report.offeredMaxInWindow());
        CapacityPlan plan = report.plan();
        root.put("min_lossless_burst", plan.minLosslessBurst());
        boolean any = plan.worstEvents() > 0;
        root.put("worst_stretch_start", any ? Instant.ofEpochMilli(plan.worstStartMillis()).toString() : null);
        root.put("worst_stretch_end", any ? Instant.ofEpochMilli(plan.worstEndMillis()).toString() : null);
        root.put("worst_stretch_events", plan.worstEvents());
        ObjectNode algorithms = root.putObject("algorithms");
        for (Map.Entry<Algorithm, Evaluation> e : report.results().entrySet()) {
            ObjectNode a = algorithms.putObject(e.getKey().label());
            a.put("admitted", e.getValue().admitted());
            a.put("refused", e.getValue().refused());
            a.put("max_in_window", e.getValue().maxInWindow());
        }
        return root;
    }

    static String write(PlanReport report) {
        try {
            return MAPPER.writeValueAsString(toJson(report));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("cannot write plan JSON", e);
        }
    }
}
