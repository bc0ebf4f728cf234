package dev.sluice.topology;

import dev.sluice.config.ConfigException;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;
import org.apache.kafka.streams.StreamsConfig;

/**
 * Immutable configuration of the topology application, read once from {@link Settings} and validated
 * (a {@link ConfigException} names the key and the value).
 *
 * <p>Keys (environment override {@code SLUICE_<KEY>}, e.g. {@code SLUICE_BOOTSTRAP_SERVERS}):
 * <ul>
 *   <li>{@code bootstrap.servers} (required) Kafka brokers, {@code host:port,...}</li>
 *   <li>{@code schema.registry.url} (required) Confluent-compatible registry URL(s), comma separated; the
 *       other {@code CachedSchemaRegistryClient} keys ({@code basic.auth.user.info},
 *       {@code schema.registry.connect.timeout.ms}, {@code schema.registry.request.timeout.ms},
 *       {@code schema.registry.retry.max.ms}) apply</li>
 *   <li>{@code application.id} (default {@code sluice-topology}) Kafka Streams application id: consumer
 *       group and prefix of the internal topics ({@code <application.id>-by-chat-repartition})</li>
 *   <li>{@code processing.guarantee} (default {@code exactly_once_v2}; or {@code at_least_once})</li>
 *   <li>{@code state.dir} (default: Kafka Streams' default under java.io.tmpdir) local state directory</li>
 *   <li>{@code num.stream.threads} (default 1)</li>
 *   <li>{@code commit.interval.ms} (default: Kafka Streams' default, 100 ms under exactly-once)</li>
 *   <li>{@code critical.commit.interval.ms} (default 20; 0..60000, 0 = off) after a CRITICAL notification went to the
 *       outbox, the stream thread commits at once instead of at {@code commit.interval.ms}, so its transaction (and the
 *       notification) is visible to the senders sooner; at most one such commit per this many ms per stream thread
 *       ({@link CriticalCommits})</li>
 *   <li>{@code topic.*} topic names, see {@link Topics}</li>
 *   <li>{@code classify.kind.patterns} (default none) {@code <kind glob>=<CLASS>} pairs, first match wins, e.g.
 *       {@code meeting.*=CRITICAL,board.*=COLLAPSIBLE}; see {@link KindPatternClassifier}</li>
 *   <li>{@code digest.flush.interval.ms} (default 60000) wall-clock period of the digest flush punctuator</li>
 *   <li>{@code digest.deadline.lead.ms} (default 1000; 0..600000) a pending digest entry whose earliest folded
 *       {@code expires_at} is this close leaves early instead of waiting for the next flush, so the sender still has this
 *       long to deliver it; checked every {@code schedule.release.interval.ms}, only while some entry's deadline comes
 *       before the next flush ({@link DigestFolder#leaveBeforeDeadlines})</li>
 *   <li>{@code digest.max.keys} (default 200) pending digest keys per lane and task that trigger a flush at once</li>
 *   <li>{@code digest.max.folded.ids} (default 100, at most 1000) folded ids one digest entry holds; an entry that
 *       reaches it is flushed at once as its own digest, so every folded id is in exactly one digest. The bound keeps a
 *       digest record (ids of up to 256 bytes each) far below a producer's 1 MiB {@code max.request.size}</li>
 *   <li>{@code dedupe.window.ms} (default 86400000, 24 h) how long a notification id is remembered per lane and chat
 *       (window stores {@code <lane>-dedupe-batches} and {@code <lane>-dedupe-store}, changelogged, {@code SeenIds}): a repeated id within it is
 *       counted and dropped, with no second outbound message and no second result</li>
 *   <li>{@code schedule.max.horizon.ms} (default 34560000000, 400 days) a {@code not_before} further than this
 *       ahead of now is dead-lettered with the reason (and a FAILED result), instead of waiting without end</li>
 *   <li>{@code edit.wait.max.ms} (default 600000, 10 min; 1000..86400000) how long an edit or delete ({@code edit_of},
 *       {@code delete_of}) waits for the result of the notification it names; messages to the same chat queued behind it wait
 *       too (per-chat order). Past it the edit ends FAILED "message to edit not found" ({@link EditAddressing})</li>
 *   <li>{@code edit.target.retention.ms} (default 86400000, 24 h; 60000..2592000000) how long the provider message id of a
 *       delivered notification is kept for edits and deletes (window store {@code provider-message-id-store}, changelogged)</li>
 *   <li>{@code text.too.long} (default {@code dead-letter}; or {@code split}) what a notification whose text is too long
 *       for one Telegram message does (more than 4,096 characters for sendMessage, 1,024 for a media caption):
 *       {@code dead-letter} sends it to {@code notifications.dlq} with a FAILED result (the behaviour before the key
 *       existed); {@code split} sends it as ordered parts ({@link TextSplitter}: cut at paragraph, line, then word
 *       boundaries) to the same chat, parts {@code <id>#k/n}, whose results the topology folds into the
 *       notification's one result ({@link PartResultsProcessor}). Edits stay bounded (an edit is one message)</li>
 *   <li>{@code text.split.max.parts} (default 10; 2..20) with {@code split}: a text that needs more parts is
 *       dead-lettered with a reason naming the field, its length and this key</li>
 *   <li>{@code stream.thread.replacements.max} (default 3) and {@code stream.thread.replacements.window.ms} (default
 *       600000): a failed stream thread is replaced at most this many times within the window; one more failure
 *       shuts the Kafka Streams client down (state ERROR: {@code /health/live} and {@code /health/ready} answer 503)
 *       instead of reprocessing a deterministic failure forever</li>
 *   <li>{@code schedule.release.interval.ms} (default 250) wall-clock period of the punctuator that releases
 *       scheduled ({@code not_before}) notifications: they leave at most this late</li>
 *   <li>{@code pressure.drain.time.threshold.ms} (default 30000) a bot is under pressure when the summed
 *       backlog of its fresh {@code sender.status} reports divided by their summed drain rate exceeds this</li>
 *   <li>{@code pressure.status.max.age.ms} (default 60000) {@code sender.status} reports older than this
 *       (by their {@code at}) are ignored</li>
 *   <li>{@code policy.chat.rate}, {@code policy.chat.burst}, {@code policy.chat.overrides} the per-chat policy
 *       limit, see {@link ChatPolicy}</li>
 *   <li>{@code kafka.<any Kafka client or Streams property>} passed through with the prefix removed, e.g.
 *       {@code kafka.security.protocol=SASL_SSL}, {@code kafka.replication.factor=3}. The named keys above
 *       win over a pass-through of the same name. One Streams default differs: {@code max.task.idle.ms} is
 *       {@code -1} unless passed through (a task processes what it has buffered instead of first fetching its
 *       empty partitions: the routing task reads six; the cost, no timestamp order between chat status and
 *       notifications already on the broker, is in docs/operations.md); and {@code statestore.uncommitted.max.bytes} is
 *       {@code -1} unless passed through or {@code enable.transactional.statestores=true} (without transactional stores
 *       no store holds uncommitted bytes, and the check sums them over every store on every processing loop)</li>
 * </ul>
 */
public final class TopologyConfig {
    /** {@code text.too.long}: what a notification whose text is too long for one message does. */
    public enum TextTooLong {
        /** Dead-lettered with a FAILED result (the default, the behaviour before the key existed). */
        DEAD_LETTER,
        /** Sent as ordered parts sharing the notification's one result. */
        SPLIT
    }

    public static final String BOOTSTRAP_SERVERS = "bootstrap.servers";
    public static final String SCHEMA_REGISTRY_URL = "schema.registry.url";
    public static final String APPLICATION_ID = "application.id";
    public static final String PROCESSING_GUARANTEE = "processing.guarantee";
    public static final String STATE_DIR = "state.dir";
    public static final String NUM_STREAM_THREADS = "num.stream.threads";
    public static final String COMMIT_INTERVAL_MS = "commit.interval.ms";
    public static final String CRITICAL_COMMIT_INTERVAL_MS = "critical.commit.interval.ms";
    public static final String KAFKA_PREFIX = "kafka.";
    public static final String DEFAULT_APPLICATION_ID = "sluice-topology";
    public static final String CLASSIFY_KIND_PATTERNS = "classify.kind.patterns";
    public static final String DIGEST_FLUSH_INTERVAL_MS = "digest.flush.interval.ms";
    public static final String DIGEST_DEADLINE_LEAD_MS = "digest.deadline.lead.ms";
    public static final String DIGEST_MAX_KEYS = "digest.max.keys";
    public static final String DIGEST_MAX_FOLDED_IDS = "digest.max.folded.ids";
    public static final String SCHEDULE_RELEASE_INTERVAL_MS = "schedule.release.interval.ms";
    public static final String PRESSURE_DRAIN_TIME_THRESHOLD_MS = "pressure.drain.time.threshold.ms";
    public static final String PRESSURE_STATUS_MAX_AGE_MS = "pressure.status.max.age.ms";
    public static final String DEDUPE_WINDOW_MS = "dedupe.window.ms";
    public static final String SCHEDULE_MAX_HORIZON_MS = "schedule.max.horizon.ms";
    public static final String EDIT_WAIT_MAX_MS = "edit.wait.max.ms";
    public static final String EDIT_TARGET_RETENTION_MS = "edit.target.retention.ms";
    public static final String TEXT_TOO_LONG = "text.too.long";
    public static final String TEXT_SPLIT_MAX_PARTS = "text.split.max.parts";
    /** Most parts {@code text.split.max.parts} may allow (20 messages of 4,096 characters). */
    public static final int MAX_TEXT_SPLIT_PARTS = 20;
    public static final String STREAM_THREAD_REPLACEMENTS_MAX = "stream.thread.replacements.max";
    public static final String STREAM_THREAD_REPLACEMENTS_WINDOW_MS = "stream.thread.replacements.window.ms";
    /** Largest {@code digest.max.folded.ids}: 1000 ids of at most 256 bytes stay far below 1 MiB. */
    public static final int MAX_DIGEST_FOLDED_IDS = 1000;

    private final Settings settings;
    private final String bootstrapServers;
    private final String schemaRegistryUrl;
    private final String applicationId;
    private final String processingGuarantee;
    private final Optional<String> stateDir;
    private final int numStreamThreads;
    private final OptionalLong commitIntervalMs;
    private final long criticalCommitIntervalMs;
    private final Topics topics;
    private final Map<String, String> kafkaPassThrough;
    private final KindPatternClassifier classifier;
    private final long digestFlushIntervalMs;
    private final long digestDeadlineLeadMs;
    private final int digestMaxKeys;
    private final int digestMaxFoldedIds;
    private final long scheduleReleaseIntervalMs;
    private final long pressureDrainTimeThresholdMs;
    private final long pressureStatusMaxAgeMs;
    private final ChatPolicy chatPolicy;
    private final long dedupeWindowMs;
    private final long scheduleMaxHorizonMs;
    private final long editWaitMaxMs;
    private final long editTargetRetentionMs;
    private final int streamThreadReplacementsMax;
    private final TextTooLong textTooLong;
    private final int textSplitMaxParts;
    private final long streamThreadReplacementsWindowMs;

    private TopologyConfig(Settings s) {
        this.settings = s;
        this.bootstrapServers = s.required(BOOTSTRAP_SERVERS);
        this.schemaRegistryUrl = s.required(SCHEMA_REGISTRY_URL);
        this.applicationId = s.string(APPLICATION_ID, DEFAULT_APPLICATION_ID);
        if (!applicationId.matches("[a-zA-Z0-9._-]+")) {
            throw Settings.invalid(APPLICATION_ID, applicationId, "letters, digits, '.', '_' and '-' only (it prefixes topic names)");
        }
        String guarantee = s.string(PROCESSING_GUARANTEE, StreamsConfig.EXACTLY_ONCE_V2).trim().toLowerCase();
        if (!guarantee.equals(StreamsConfig.EXACTLY_ONCE_V2) && !guarantee.equals(StreamsConfig.AT_LEAST_ONCE)) {
            throw Settings.invalid(PROCESSING_GUARANTEE, guarantee, StreamsConfig.EXACTLY_ONCE_V2 + " or " + StreamsConfig.AT_LEAST_ONCE);
        }
        this.processingGuarantee = guarantee;
        this.stateDir = Optional.ofNullable(s.string(STATE_DIR, null));
        this.numStreamThreads = s.positiveInt(NUM_STREAM_THREADS, 1);
        this.commitIntervalMs = s.has(COMMIT_INTERVAL_MS) ? OptionalLong.of(s.positiveLong(COMMIT_INTERVAL_MS, 100)) : OptionalLong.empty();
        this.criticalCommitIntervalMs = s.longValue(CRITICAL_COMMIT_INTERVAL_MS, 20, v -> v >= 0 && v <= 60_000,
                "a duration in milliseconds 0..60000 (0: no early commit for CRITICAL notifications)");
        this.topics = Topics.from(s);
        this.kafkaPassThrough = Map.copyOf(s.withPrefix(KAFKA_PREFIX));
        this.classifier = KindPatternClassifier.parse(CLASSIFY_KIND_PATTERNS, s.string(CLASSIFY_KIND_PATTERNS, ""));
        this.digestFlushIntervalMs = s.longValue(DIGEST_FLUSH_INTERVAL_MS, 60_000, v -> v >= 10, "a duration in milliseconds >= 10");
        this.digestDeadlineLeadMs = s.longValue(DIGEST_DEADLINE_LEAD_MS, 1_000, v -> v >= 0 && v <= 600_000,
                "a duration in milliseconds 0..600000");
        this.digestMaxKeys = s.positiveInt(DIGEST_MAX_KEYS, 200);
        this.digestMaxFoldedIds = Math.toIntExact(s.longValue(DIGEST_MAX_FOLDED_IDS, 100, v -> v >= 1 && v <= MAX_DIGEST_FOLDED_IDS,
                "an integer 1.." + MAX_DIGEST_FOLDED_IDS + " (a digest record must stay below max.request.size)"));
        this.scheduleReleaseIntervalMs = s.longValue(SCHEDULE_RELEASE_INTERVAL_MS, 250, v -> v >= 10 && v <= 60_000,
                "a duration in milliseconds 10..60000");
        this.pressureDrainTimeThresholdMs = s.positiveLong(PRESSURE_DRAIN_TIME_THRESHOLD_MS, 30_000);
        this.pressureStatusMaxAgeMs = s.positiveLong(PRESSURE_STATUS_MAX_AGE_MS, 60_000);
        this.chatPolicy = ChatPolicy.from(s);
        this.dedupeWindowMs = s.longValue(DEDUPE_WINDOW_MS, 86_400_000L, v -> v >= 1_000 && v <= 30L * 86_400_000L,
                "a duration in milliseconds 1000..2592000000 (30 days)");
        this.scheduleMaxHorizonMs = scheduleMaxHorizonMs(s);
        this.editWaitMaxMs = s.longValue(EDIT_WAIT_MAX_MS, 600_000, v -> v >= 1_000 && v <= 86_400_000L,
                "a duration in milliseconds 1000..86400000 (24 h)");
        this.editTargetRetentionMs = s.longValue(EDIT_TARGET_RETENTION_MS, 86_400_000L, v -> v >= 60_000 && v <= 30L * 86_400_000L,
                "a duration in milliseconds 60000..2592000000 (30 days)");
        this.textTooLong = s.enumValue(TEXT_TOO_LONG, TextTooLong.class, TextTooLong.DEAD_LETTER);
        this.textSplitMaxParts = Math.toIntExact(s.longValue(TEXT_SPLIT_MAX_PARTS, 10, v -> v >= 2 && v <= MAX_TEXT_SPLIT_PARTS,
                "an integer 2.." + MAX_TEXT_SPLIT_PARTS));
        this.streamThreadReplacementsMax = Math.toIntExact(s.longValue(STREAM_THREAD_REPLACEMENTS_MAX, 3, v -> v >= 0 && v <= 1_000,
                "an integer 0..1000"));
        this.streamThreadReplacementsWindowMs = s.longValue(STREAM_THREAD_REPLACEMENTS_WINDOW_MS, 600_000, v -> v >= 1_000,
                "a duration in milliseconds >= 1000");
    }

    /**
     * {@code schedule.max.horizon.ms} alone, read and checked as the topology reads it: {@code sluice produce} refuses the
     * {@code not_before} the topology would dead-letter ({@link NotificationValidator#validateNotBefore}) with it.
     */
    public static long scheduleMaxHorizonMs(Settings s) {
        return s.longValue(SCHEDULE_MAX_HORIZON_MS, 400L * 86_400_000L, v -> v >= 1_000, "a duration in milliseconds >= 1000");
    }

    /** Reads and validates; fails with a {@link ConfigException} naming the key and value. */
    public static TopologyConfig from(Settings settings) {
        return new TopologyConfig(settings);
    }

    /** Properties for {@code new KafkaStreams(topology, props)}: pass-through first, named keys on top. */
    public Properties streamsProperties() {
        Properties p = new Properties();
        p.putAll(kafkaPassThrough);
        // Unless passed through: a task processes what it has buffered without first polling its empty partitions
        // (issue 21: with the default 0, Kafka Streams formats a log line per empty partition per processing loop).
        p.putIfAbsent(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG, Long.toString(StreamsConfig.MAX_TASK_IDLE_MS_DISABLED));
        // Unless passed through, and unless transactional state stores are on (the only stores with uncommitted bytes):
        // no early-commit check, which sums every store's uncommitted bytes (0 here) on every processing loop (issue 21).
        if (!Boolean.parseBoolean(String.valueOf(p.getOrDefault(StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG, "false")).trim())) {
            p.putIfAbsent(StreamsConfig.STATESTORE_UNCOMMITTED_MAX_BYTES_CONFIG, "-1");
        }
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, processingGuarantee);
        p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, Integer.toString(numStreamThreads));
        stateDir.ifPresent(d -> p.put(StreamsConfig.STATE_DIR_CONFIG, d));
        commitIntervalMs.ifPresent(ms -> p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, Long.toString(ms)));
        return p;
    }

    /** The settings this was read from (for the schema registry client and later, issue-specific keys). */
    public Settings settings() {
        return settings;
    }

    public String bootstrapServers() {
        return bootstrapServers;
    }

    public String schemaRegistryUrl() {
        return schemaRegistryUrl;
    }

    public String applicationId() {
        return applicationId;
    }

    public String processingGuarantee() {
        return processingGuarantee;
    }

    public Optional<String> stateDir() {
        return stateDir;
    }

    public int numStreamThreads() {
        return numStreamThreads;
    }

    public OptionalLong commitIntervalMs() {
        return commitIntervalMs;
    }

    /** {@code critical.commit.interval.ms}: 0 = no early commit after a CRITICAL notification. */
    public long criticalCommitIntervalMs() {
        return criticalCommitIntervalMs;
    }

    public Topics topics() {
        return topics;
    }

    /** {@code classify.kind.patterns}. */
    public KindPatternClassifier classifier() {
        return classifier;
    }

    public long digestFlushIntervalMs() {
        return digestFlushIntervalMs;
    }

    public long digestDeadlineLeadMs() {
        return digestDeadlineLeadMs;
    }

    public int digestMaxKeys() {
        return digestMaxKeys;
    }

    public int digestMaxFoldedIds() {
        return digestMaxFoldedIds;
    }

    public long scheduleReleaseIntervalMs() {
        return scheduleReleaseIntervalMs;
    }

    public long pressureDrainTimeThresholdMs() {
        return pressureDrainTimeThresholdMs;
    }

    public long pressureStatusMaxAgeMs() {
        return pressureStatusMaxAgeMs;
    }

    public ChatPolicy chatPolicy() {
        return chatPolicy;
    }

    /** {@code dedupe.window.ms}. */
    public long dedupeWindowMs() {
        return dedupeWindowMs;
    }

    /** {@code edit.wait.max.ms}. */
    public long editWaitMaxMs() {
        return editWaitMaxMs;
    }

    /** {@code edit.target.retention.ms}. */
    public long editTargetRetentionMs() {
        return editTargetRetentionMs;
    }

    /** {@code schedule.max.horizon.ms}. */
    public long scheduleMaxHorizonMs() {
        return scheduleMaxHorizonMs;
    }

    /** {@code text.too.long}. */
    public TextTooLong textTooLong() {
        return textTooLong;
    }

    /** {@code text.split.max.parts}. */
    public int textSplitMaxParts() {
        return textSplitMaxParts;
    }

    /** {@code stream.thread.replacements.max}. */
    public int streamThreadReplacementsMax() {
        return streamThreadReplacementsMax;
    }

    /** {@code stream.thread.replacements.window.ms}. */
    public long streamThreadReplacementsWindowMs() {
        return streamThreadReplacementsWindowMs;
    }

    /** {@code kafka.*} entries with the prefix removed. */
    public Map<String, String> kafkaPassThrough() {
        return kafkaPassThrough;
    }

    @Override
    public String toString() {
        StringBuilder pass = new StringBuilder();
        kafkaPassThrough.forEach((k, v) -> pass.append(k).append('=').append(Settings.redactIfSecret(k, v)).append(", "));
        return "TopologyConfig{application.id=" + applicationId + ", bootstrap.servers=" + bootstrapServers
                + ", processing.guarantee=" + processingGuarantee + ", num.stream.threads=" + numStreamThreads
                + ", critical.commit.interval.ms=" + criticalCommitIntervalMs
                + ", topics=" + topics + ", classify.kind.patterns=" + classifier + ", digest.flush.interval.ms=" + digestFlushIntervalMs
                + ", digest.deadline.lead.ms=" + digestDeadlineLeadMs + ", digest.max.keys=" + digestMaxKeys + ", digest.max.folded.ids=" + digestMaxFoldedIds
                + ", schedule.release.interval.ms=" + scheduleReleaseIntervalMs
                + ", pressure.drain.time.threshold.ms=" + pressureDrainTimeThresholdMs
                + ", pressure.status.max.age.ms=" + pressureStatusMaxAgeMs + ", policy=" + chatPolicy
                + ", dedupe.window.ms=" + dedupeWindowMs + ", schedule.max.horizon.ms=" + scheduleMaxHorizonMs
                + ", text.too.long=" + textTooLong.name().toLowerCase().replace('_', '-')
                + ", text.split.max.parts=" + textSplitMaxParts
                + ", stream.thread.replacements.max=" + streamThreadReplacementsMax
                + ", stream.thread.replacements.window.ms=" + streamThreadReplacementsWindowMs
                + ", kafka.*={" + pass + "}}";
    }
}
