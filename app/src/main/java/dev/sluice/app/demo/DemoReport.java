package dev.sluice.app.demo;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a demo run shows: inputs, results, what the provider saw, and the invariants Sluice promises
 * (order, no duplicates, every input accounted for, no window above a limit). Written as JSON with
 * {@code --report-json}; the keys are stable so scripts can check a run.
 */
public record DemoReport(
        @JsonProperty("notifications_in") long notificationsIn,
        @JsonProperty("results") Map<String, Long> results,
        @JsonProperty("dead_lettered") long deadLettered,
        @JsonProperty("provider_accepted") long providerAccepted,
        @JsonProperty("provider_429") long provider429,
        @JsonProperty("max_bot_msgs_per_1s") long maxBotMsgsPer1s,
        @JsonProperty("max_chat_msgs_per_1s") long maxChatMsgsPer1s,
        @JsonProperty("max_group_msgs_per_60s") long maxGroupMsgsPer60s,
        @JsonProperty("order_violations") long orderViolations,
        @JsonProperty("duplicates") long duplicates,
        @JsonProperty("unaccounted") long unaccounted,
        @JsonProperty("folded") long folded,
        @JsonProperty("digests") long digests,
        @JsonProperty("expired") long expired,
        @JsonProperty("skipped_inactive") long skippedInactive,
        @JsonProperty("lag_ms") Lag lagMs,
        @JsonProperty("lag_ms_by_class") Map<String, ClassLag> lagMsByClass,
        @JsonProperty("run") RunInfo run) {

    /** The class of a digest's result in {@link #lagMsByClass}: the COLLAPSIBLE notifications it folded. */
    public static final String DIGEST_CLASS = "COLLAPSIBLE-digest";
    /** The classes always listed, in the order shown: critical first, since they must go first. */
    public static final List<String> LAG_CLASSES = List.of("CRITICAL", "ROUTINE", "COLLAPSIBLE", DIGEST_CLASS);

    /** Due-to-sent lag of the delivered messages of one class, milliseconds; {@code delivered} counts them. */
    public record ClassLag(@JsonProperty("delivered") long delivered, @JsonProperty("p50") long p50,
                           @JsonProperty("p99") long p99, @JsonProperty("max") long max) {
    }

    /** Due-to-sent lag of delivered messages, milliseconds. */
    public record Lag(@JsonProperty("p50") long p50, @JsonProperty("p99") long p99, @JsonProperty("max") long max) {
    }

    /** How the run was configured, so a report can be read on its own. */
    public record RunInfo(
            @JsonProperty("senders") int senders,
            @JsonProperty("budget") String budget,
            @JsonProperty("provider_limit_bot_per_s") int providerBotPerSecond,
            @JsonProperty("provider_limit_group_per_min") int providerGroupPerMinute,
            @JsonProperty("budget_global_rate_per_s") double budgetGlobalRatePerSecond,
            @JsonProperty("duration_s") double durationSeconds,
            @JsonProperty("completed") boolean completed,
            @JsonProperty("redis_round_trips_before_send") long redisRoundTripsBeforeSend) {

        /** A run without Redis counts (tests, {@code --budget local}). */
        public RunInfo(int senders, String budget, int providerBotPerSecond, int providerGroupPerMinute,
                       double budgetGlobalRatePerSecond, double durationSeconds, boolean completed) {
            this(senders, budget, providerBotPerSecond, providerGroupPerMinute, budgetGlobalRatePerSecond, durationSeconds,
                    completed, 0);
        }
    }

    public void writeJson(Path path) {
        try {
            Path parent = path.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(path.toFile(), this);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write report to " + path + ": " + e.getMessage(), e);
        }
    }

    /** A human-readable table for the terminal. */
    public String toText() {
        StringBuilder sb = new StringBuilder();
        sb.append("Sluice demo report\n");
        sb.append(String.format(Locale.ROOT, "  run: %d sender(s), budget=%s, provider limits %d msg/s per bot and %d msg/min per group, budget %.1f msg/s, %.1f s%s%n",
                run.senders(), run.budget(), run.providerBotPerSecond(), run.providerGroupPerMinute(),
                run.budgetGlobalRatePerSecond(), run.durationSeconds(), run.completed() ? "" : " (STOPPED before every result arrived)"));
        row(sb, "notifications_in", notificationsIn, "");
        results.forEach((status, n) -> row(sb, "results." + status, n, ""));
        row(sb, "dead_lettered", deadLettered, "");
        row(sb, "provider_accepted", providerAccepted, "");
        row(sb, "provider_429", provider429, provider429 == 0 ? "ok" : "the provider refused: budget above its limit");
        row(sb, "max_bot_msgs_per_1s", maxBotMsgsPer1s,
                maxBotMsgsPer1s <= run.providerBotPerSecond() ? "ok (limit " + run.providerBotPerSecond() + ")" : "ABOVE the limit of " + run.providerBotPerSecond());
        row(sb, "max_chat_msgs_per_1s", maxChatMsgsPer1s, "");
        row(sb, "max_group_msgs_per_60s", maxGroupMsgsPer60s,
                maxGroupMsgsPer60s <= run.providerGroupPerMinute() ? "ok (limit " + run.providerGroupPerMinute() + ")" : "ABOVE the limit of " + run.providerGroupPerMinute());
        row(sb, "order_violations", orderViolations, orderViolations == 0 ? "ok" : "per-chat order broken");
        row(sb, "duplicates", duplicates, duplicates == 0 ? "ok" : "sent more than once");
        row(sb, "unaccounted", unaccounted, unaccounted == 0 ? "ok" : "inputs without exactly one result");
        row(sb, "folded", folded, "notifications folded into digests");
        row(sb, "digests", digests, "digest messages settling them");
        row(sb, "expired", expired, "past their deadline");
        row(sb, "skipped_inactive", skippedInactive, "to chats that blocked the bot, no budget spent");
        sb.append(String.format(Locale.ROOT, "  %-24s p50=%d p99=%d max=%d%n", "lag_ms (due->sent)", lagMs.p50(), lagMs.p99(), lagMs.max()));
        lagMsByClass.forEach((c, l) -> sb.append(String.format(Locale.ROOT, "    %-22s %8d  p50=%d p99=%d max=%d%n",
                c, l.delivered(), l.p50(), l.p99(), l.max())));
        if (run.redisRoundTripsBeforeSend() > 0 && providerAccepted > 0) {
            double perSent = (double) run.redisRoundTripsBeforeSend() / providerAccepted;
            sb.append(String.format(Locale.ROOT, "  %-24s %8d  %.2f per accepted message (budget decisions and sent-mark reads)%n",
                    "redis_round_trips", run.redisRoundTripsBeforeSend(), perSent));
        }
        return sb.toString();
    }

    private static void row(StringBuilder sb, String name, long value, String note) {
        sb.append(String.format(Locale.ROOT, "  %-24s %8d  %s%n", name, value, note));
    }
}
