package dev.sluice.metrics;

import java.util.List;

/**
 * Every Sluice metric name and tag key, in one place. Names are Micrometer names (dots); a Prometheus
 * scrape shows them with dots as underscores, counters with {@code _total}, timers and {@code seconds}
 * base units with {@code _seconds} (e.g. {@link #RESULTS} is {@code sluice_sender_results_total},
 * {@link #DELIVERY_LAG} is {@code sluice_delivery_lag_seconds_bucket}).
 *
 * <p>Record through the per-process views {@link SenderMetrics} and {@link TopologyMetrics}, never by
 * name, so a name cannot drift between the code, the dashboard and the alert rules (a test in the app
 * module checks the deploy files against what these views register).
 *
 * <p>Bot ids appear as tag values; bot tokens never do.
 */
public final class SluiceMetrics {
    private SluiceMetrics() {
    }

    /** Prefix of every Sluice metric. */
    public static final String PREFIX = "sluice.";

    // ---- tag keys ----
    /** The bot id (the config id in {@code bot.<id>.token}, never the token). */
    public static final String TAG_BOT = "bot";
    /** Which limit answered 429: {@link RateLimitScope}. */
    public static final String TAG_SCOPE = "scope";
    /** Notification class: CRITICAL, ROUTINE, COLLAPSIBLE. */
    public static final String TAG_CLASS = "class";
    /** Delivery status of a result (DeliveryStatus symbols). */
    public static final String TAG_STATUS = "status";
    /** Budget mode: {@link BudgetState}. */
    public static final String TAG_MODE = "mode";
    /** Provider answer class: {@link ProviderOutcome}. */
    public static final String TAG_OUTCOME = "outcome";
    /** A short, bounded reason code (never free text: it is a tag). */
    public static final String TAG_REASON = "reason";
    /** The budget limit that refused: global, chat, group, gate (a 429 penalty). */
    public static final String TAG_LIMIT = "limit";
    /** live or backfill. */
    public static final String TAG_LANE = "lane";
    /** Tag: what Kafka Streams was told to do with a failed stream thread ({@code replace_thread}, {@code shutdown_client}). */
    public static final String TAG_RESPONSE = "response";

    // ---- sender ----
    /**
     * Gauge, ratio 0..1 per bot: budget granted by this instance in the last 60 s over the bot's global
     * budget for 60 s (rate × 60). Summed over all sender replicas it is the bot's utilisation.
     */
    public static final String BUDGET_UTILISATION = "sluice.budget.utilisation";
    /** Counter per bot: budget permits granted (one per send). */
    public static final String BUDGET_GRANTED = "sluice.budget.granted";
    /**
     * Counter per bot: reserved budget slots that passed unused because the send was later than
     * {@code budget.reservation.late.max.ms} (a loaded host); the lane asked again instead of bunching.
     */
    public static final String BUDGET_SLOTS_FORFEITED = "sluice.budget.slots.forfeited";
    /**
     * Counter per bot: provider answers that came later after their budget slot than the arrival guard's slack
     * ({@code budget.arrival.guard.limit.per.s}); each made a later grant of the bot wait, instead of risking a 429.
     */
    public static final String BUDGET_LATE_ANSWERS = "sluice.budget.late.answers";
    /** Gauge per mode: 1 for the current budget mode of this instance, 0 for the others. */
    public static final String BUDGET_MODE = "sluice.budget.mode";
    /**
     * Gauge: bots this sender serves that another live sender sharing its Redis decides with other budget limits
     * (rates, bursts, margins, AIMD, the script; {@code budget.limits.check}).
     */
    public static final String BUDGET_LIMITS_DISAGREEING_BOTS = "sluice.budget.limits.disagreeing.bots";
    /** Function counter per mode, seconds: time this instance spent in each budget mode. */
    public static final String BUDGET_MODE_TIME = "sluice.budget.mode.time";
    /** Counter per bot and scope: 429 Too Many Requests answers (Telegram's retry_after). */
    public static final String RATE_LIMITED = "sluice.provider.rate.limited";
    /** Counter per bot and outcome: every provider call (denominator of the 429 share). */
    public static final String PROVIDER_REQUESTS = "sluice.provider.requests";
    /** Timer per class: due time (not_before, else created) to accepted by the provider; p50/p99 and histogram. */
    public static final String DELIVERY_LAG = "sluice.delivery.lag";
    /** Gauge: the deepest per-chat lane of this instance (the maximum, not the sum). */
    public static final String LANE_DEPTH_MAX = "sluice.sender.lane.depth.max";
    /** Gauge: records buffered in this instance (bounded by sender.buffer.max.records). */
    public static final String BUFFERED_RECORDS = "sluice.sender.buffered.records";
    /** Gauge per bot: messages waiting in this instance for that bot. */
    public static final String BACKLOG = "sluice.sender.backlog";
    /** Gauge per bot: 1 while the provider rejects the bot's token (401/404; lanes parked), else 0. No token in tags. */
    public static final String BOT_TOKEN_REJECTED = "sluice.bot.token.rejected";
    /** Gauge per bot, messages per second: sends granted in the last 60 s / 60. */
    public static final String DRAIN_RATE = "sluice.sender.drain.rate";
    /** Gauge per bot, seconds: backlog / drain rate (+Inf when a backlog does not drain at all). */
    public static final String DRAIN_TIME = "sluice.sender.drain.time";
    /** Counter per status and class: terminal delivery results written. */
    public static final String RESULTS = "sluice.sender.results";
    /** Counter per bot and limit (global, chat, group, gate): budget decisions that refused and rescheduled. */
    public static final String BUDGET_REFUSALS = "sluice.budget.refusals";
    /** Counter: times the consumer paused its partitions at the buffer's high-water mark (backpressure). */
    public static final String BACKPRESSURE_PAUSES = "sluice.sender.backpressure.pauses";
    /** Counter per kind: Redis errors (timeout, connection, script, other). */
    public static final String REDIS_ERRORS = "sluice.redis.errors";
    /** Counter per cause (registry, broker, other): result writes that failed and are retried in memory. */
    public static final String RESULTS_WRITE_FAILED = "sluice.results.write.failed";
    /** Counter per reason: outbox records a sender could never read, written to its dead-letter topic. */
    public static final String OUTBOX_DEAD_LETTERED = "sluice.sender.dead.lettered";
    /** Tag values of {@link #RESULTS_WRITE_FAILED}: the result schema (registry), Kafka (broker), anything else. */
    public static final List<String> RESULT_WRITE_FAILURE_CAUSES = List.of("registry", "broker", "other");
    /** Tag values of {@link #OUTBOX_DEAD_LETTERED}. */
    public static final List<String> OUTBOX_DEAD_LETTER_REASONS = List.of("not_wire_format", "invalid_record",
            "schema_not_found", "invalid_writer_schema");
    /** Counter: reads of outbox records that failed for a transient cause (registry down) and are retried. */
    public static final String OUTBOX_READ_RETRIES = "sluice.sender.read.retries";
    /** Counter per bot: outbox records not buffered because their bot's backlog was full, read again later. */
    public static final String BACKLOG_DEFERRED = "sluice.sender.backlog.deferred";

    // ---- topology ----
    /** Counter per class: notifications folded into the digest store instead of sent. */
    public static final String TOPOLOGY_FOLDED = "sluice.topology.folded";
    /** Counter per reason (interval, max_keys): digest messages emitted. */
    public static final String TOPOLOGY_DIGESTS = "sluice.topology.digests";
    /** Counter per class: notifications ended as EXPIRED in the topology (past expires_at). */
    public static final String TOPOLOGY_EXPIRED = "sluice.topology.expired";
    /** Counter per reason: notifications ended without sending (e.g. inactive chat). */
    public static final String TOPOLOGY_SKIPPED = "sluice.topology.skipped";
    /** Counter per reason code: records sent to the dead-letter topic. */
    public static final String TOPOLOGY_DLQ = "sluice.topology.dlq";
    /** Counter per lane and class: outbound messages written to the outboxes. */
    public static final String TOPOLOGY_OUTBOUND = "sluice.topology.outbound";
    /** Counter per lane: notifications dropped because their id was seen within {@code dedupe.window.ms}. */
    public static final String TOPOLOGY_DUPLICATES = "sluice.topology.duplicates";
    /**
     * Counter per response: failed stream threads, {@code replace_thread} (replaced, bounded by
     * {@code stream.thread.replacements.max}) or {@code shutdown_client} (the bound was reached: the topology stopped).
     */
    public static final String TOPOLOGY_STREAM_THREAD_FAILURES = "sluice.topology.stream.thread.failures";
    /** Gauge: keys pending in the digest stores of this instance (approximate entries). */
    public static final String TOPOLOGY_DIGEST_STORE_SIZE = "sluice.topology.digest.store.size";

    /** Every Sluice metric name above (for consistency checks). */
    public static List<String> all() {
        return List.of(BUDGET_UTILISATION, BUDGET_GRANTED, BUDGET_SLOTS_FORFEITED, BUDGET_LATE_ANSWERS, BUDGET_MODE, BUDGET_MODE_TIME,
                BUDGET_LIMITS_DISAGREEING_BOTS, RATE_LIMITED,
                PROVIDER_REQUESTS, DELIVERY_LAG, LANE_DEPTH_MAX, BUFFERED_RECORDS, BACKLOG, BOT_TOKEN_REJECTED, DRAIN_RATE, DRAIN_TIME,
                RESULTS, REDIS_ERRORS, BUDGET_REFUSALS, BACKPRESSURE_PAUSES, RESULTS_WRITE_FAILED, OUTBOX_DEAD_LETTERED,
                OUTBOX_READ_RETRIES, BACKLOG_DEFERRED, TOPOLOGY_FOLDED, TOPOLOGY_DIGESTS, TOPOLOGY_EXPIRED, TOPOLOGY_SKIPPED,
                TOPOLOGY_DLQ, TOPOLOGY_OUTBOUND, TOPOLOGY_DIGEST_STORE_SIZE, TOPOLOGY_DUPLICATES, TOPOLOGY_STREAM_THREAD_FAILURES);
    }

    /** Tag values are lower case with underscores ({@code FALLBACK_LOCAL} → {@code fallback_local}). */
    static String tagValue(Enum<?> e) {
        return e.name().toLowerCase(java.util.Locale.ROOT);
    }
}
