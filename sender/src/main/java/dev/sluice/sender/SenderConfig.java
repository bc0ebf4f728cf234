package dev.sluice.sender;

import dev.sluice.config.ConfigException;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetKeys;
import dev.sluice.sender.budget.BudgetLimits;
import dev.sluice.sender.http.HttpProviderConfig;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import dev.sluice.avro.NotificationClass;

/**
 * Immutable configuration of one sender instance, read once from {@link Settings} and validated; every
 * error is a {@link ConfigException} naming the key and the value (tokens redacted).
 *
 * <table>
 * <caption>Keys</caption>
 * <tr><td>{@code bootstrap.servers}</td><td>required</td></tr>
 * <tr><td>{@code schema.registry.url}</td><td>required; other {@code schema.registry.*} keys and
 *     {@code basic.auth.user.info} go to the registry client</td></tr>
 * <tr><td>{@code sender.group.id}</td><td>consumer group, default {@code sluice-sender}</td></tr>
 * <tr><td>{@code sender.instance.id}</td><td>default {@code <hostname>-<pid>}; written into results</td></tr>
 * <tr><td>{@code topic.*}</td><td>topic names, see {@link Topics}</td></tr>
 * <tr><td>{@code sender.consume.backfill}</td><td>also consume {@code outbox.backfill}, default true</td></tr>
 * <tr><td>{@code telegram.api.url}</td><td>pengrad apiUrl form, default {@code https://api.telegram.org/bot}</td></tr>
 * <tr><td>{@code bot.<botId>.token}</td><td>at least one; secret, never printed</td></tr>
 * <tr><td>{@code budget.mode}</td><td>{@code redis} (default) or {@code local}</td></tr>
 * <tr><td>{@code redis.url}</td><td>required in redis mode, e.g. {@code redis://localhost:6379}</td></tr>
 * <tr><td>{@code budget.global.rate.per.s}, {@code budget.global.burst}</td><td>default 30, 1 (Telegram FAQ)</td></tr>
 * <tr><td>{@code budget.chat.rate.per.s}, {@code budget.chat.burst}</td><td>default 1, 3 (Telegram FAQ)</td></tr>
 * <tr><td>{@code budget.group.*}, {@code bot.<id>.rate.per.s}, {@code bot.<id>.paid.broadcast},
 *     {@code budget.backfill.headroom}, {@code budget.aimd.*}, {@code budget.redis.outage.mode},
 *     {@code budget.max.replicas}, {@code budget.redis.probe.interval.ms}</td><td>see {@link BudgetConfig}</td></tr>
 * <tr><td>{@code sender.max.in.flight}</td><td>concurrent budget+provider calls per instance, default 16</td></tr>
 * <tr><td>{@code sender.buffer.max.records}</td><td>records held in lanes before partitions pause, default 10000</td></tr>
 * <tr><td>{@code sender.buffer.max.records.per.bot}</td><td>records of one bot held in lanes; the bot's further records
 *     are deferred (read again later) while the partitions go on for other bots; default: the high-water mark less
 *     one poll ({@code sender.buffer.max.records} − 2 × max.poll.records) when several bots are configured, the whole
 *     buffer with one bot</td></tr>
 * <tr><td>{@code sender.deferred.max.records}</td><td>deferred offsets remembered (no payload); at the cap the
 *     partitions holding them pause; default 10 × {@code sender.buffer.max.records}</td></tr>
 * <tr><td>{@code sender.unreadable.schema.grace.ms}</td><td>how long an outbox record whose writer schema id the
 *     registry does not know (40403) is read again before it is dead-lettered, default 60000 (a replica that
 *     lags)</td></tr>
 * <tr><td>{@code schema.registry.auto.register}</td><td>{@code false}: look the sender's schemas up
 *     ({@code POST /subjects/{s}}) instead of registering them, for read-only registry credentials; default
 *     true</td></tr>
 * <tr><td>{@code sender.request.timeout.ms}</td><td>whole provider call, default 10000</td></tr>
 * <tr><td>{@code sender.connect.timeout.ms}</td><td>provider connect, default 5000</td></tr>
 * <tr><td>{@code redis.command.timeout.ms}</td><td>each budget decision, default 250 (short: an outage must
 *     open the circuit fast)</td></tr>
 * <tr><td>{@code sender.max.attempts}</td><td>provider calls per message for 5xx / I/O errors, default 5</td></tr>
 * <tr><td>{@code sender.retry.backoff.ms}, {@code sender.retry.backoff.max.ms}</td><td>exponential backoff base and cap
 *     (full jitter), default 500 and 30000</td></tr>
 * <tr><td>{@code sender.retry.after.jitter.ms}</td><td>one-sided jitter added to a 429's retry_after, default 250</td></tr>
 * <tr><td>{@code sender.commit.interval.ms}</td><td>offset commit period, default 1000</td></tr>
 * <tr><td>{@code sender.max.in.flight.per.bot}</td><td>provider calls in flight per bot token, default 8: one
 *     call in flight caps a bot at 1/round-trip (about 20/s at 50 ms, below Telegram's 30/s); rate × a slow
 *     round trip (30/s × 250 ms) ≈ 8 reaches the full rate, and the cap bounds what a bot-wide 429 or a crash
 *     multiplies (every call in flight may draw a 429, or be resent after a kill -9)</td></tr>
 * <tr><td>{@code sender.max.reschedules}</td><td>waits forced by the provider (429, 5xx, penalty gates) before
 *     a message ends EXPIRED, default 50</td></tr>
 * <tr><td>{@code sender.resend.uncertain.classes}</td><td>classes resent after a read timeout, comma-separated,
 *     default none (every class ends UNCERTAIN); e.g. {@code CRITICAL}</td></tr>
 * <tr><td>{@code sender.sent.mark.ttl.ms}</td><td>life of the idempotency key {@code sluice:{bot}:sent:<id>},
 *     default 604800000 (7 days, longer than the outbox retention)</td></tr>
 * <tr><td>{@code sender.breaker.failure.rate.percent}, {@code sender.breaker.window.calls},
 *     {@code sender.breaker.open.ms}, {@code sender.breaker.half.open.calls}</td><td>per-bot circuit breaker
 *     over the provider (5xx and I/O errors), default 50, 20, 5000, 2</td></tr>
 * <tr><td>{@code sender.status.interval.ms}</td><td>period of the per-bot backlog reports to
 *     {@code sender.status}, default 5000</td></tr>
 * <tr><td>{@code sender.penalty.bot.window.ms}, {@code sender.penalty.bot.min.chats}</td><td>a 429 is attributed to
 *     the whole bot when at least min.chats distinct chats of it were refused within window (Telegram's 429 does
 *     not name its scope), default 1000 and 2</td></tr>
 * <tr><td>{@code provider.<id>.*}</td><td>an HTTP provider sent to as bot {@code <id>} (its
 *     {@code bot.<id>.token} is the provider's API key, the {@code {token}} placeholder); see
 *     {@link HttpProviderConfig}</td></tr>
 * <tr><td>{@code kafka.<prop>}</td><td>passed to the consumer and producer as {@code <prop>} (SASL_SSL etc.)</td></tr>
 * </table>
 */
public final class SenderConfig {
    public static final String BOOTSTRAP_SERVERS = "bootstrap.servers";
    public static final String SCHEMA_REGISTRY_URL = "schema.registry.url";
    public static final String GROUP_ID = "sender.group.id";
    public static final String INSTANCE_ID = "sender.instance.id";
    public static final String CONSUME_BACKFILL = "sender.consume.backfill";
    public static final String TELEGRAM_API_URL = "telegram.api.url";
    public static final String BOT_PREFIX = "bot.";
    public static final String TOKEN_SUFFIX = ".token";
    public static final String BUDGET_MODE = "budget.mode";
    public static final String REDIS_URL = "redis.url";
    public static final String GLOBAL_RATE = "budget.global.rate.per.s";
    public static final String GLOBAL_BURST = "budget.global.burst";
    public static final String CHAT_RATE = "budget.chat.rate.per.s";
    public static final String CHAT_BURST = "budget.chat.burst";
    /** Budget keys read by {@link BudgetConfig}, listed here so tools that list a sender's keys see them. */
    public static final String GROUP_RATE = BudgetConfig.GROUP_RATE;
    public static final String GROUP_BURST = BudgetConfig.GROUP_BURST;
    public static final String PAID_BROADCAST_RATE = BudgetConfig.PAID_RATE;
    public static final String BACKFILL_HEADROOM = BudgetConfig.BACKFILL_HEADROOM;
    public static final String AIMD_DECREASE = BudgetConfig.AIMD_DECREASE;
    public static final String AIMD_INCREASE = BudgetConfig.AIMD_INCREASE;
    public static final String AIMD_FLOOR = BudgetConfig.AIMD_FLOOR;
    public static final String REDIS_OUTAGE_MODE = BudgetConfig.OUTAGE_MODE;
    public static final String MAX_REPLICAS = BudgetConfig.MAX_REPLICAS;
    public static final String REDIS_PROBE_INTERVAL_MS = BudgetConfig.PROBE_INTERVAL_MS;
    public static final String CIRCUIT_MINIMUM_CALLS = BudgetConfig.CIRCUIT_MINIMUM_CALLS;
    public static final String MAX_IN_FLIGHT = "sender.max.in.flight";
    public static final String BUFFER_MAX_RECORDS = "sender.buffer.max.records";
    public static final String BUFFER_MAX_RECORDS_PER_BOT = "sender.buffer.max.records.per.bot";
    public static final String DEFERRED_MAX_RECORDS = "sender.deferred.max.records";
    public static final String UNREADABLE_SCHEMA_GRACE_MS = "sender.unreadable.schema.grace.ms";
    public static final String SCHEMA_REGISTRY_AUTO_REGISTER = dev.sluice.schemas.SpecificAvroSerializer.AUTO_REGISTER_CONFIG;
    public static final String REQUEST_TIMEOUT_MS = "sender.request.timeout.ms";
    public static final String CONNECT_TIMEOUT_MS = "sender.connect.timeout.ms";
    public static final String REDIS_COMMAND_TIMEOUT_MS = "redis.command.timeout.ms";
    public static final String MAX_ATTEMPTS = "sender.max.attempts";
    public static final String RETRY_BACKOFF_MS = "sender.retry.backoff.ms";
    public static final String RETRY_BACKOFF_MAX_MS = "sender.retry.backoff.max.ms";
    public static final String RETRY_AFTER_JITTER_MS = "sender.retry.after.jitter.ms";
    public static final String COMMIT_INTERVAL_MS = "sender.commit.interval.ms";
    public static final String BOT_PENALTY_WINDOW_MS = "sender.penalty.bot.window.ms";
    public static final String BOT_PENALTY_MIN_CHATS = "sender.penalty.bot.min.chats";
    public static final String MAX_IN_FLIGHT_PER_BOT = "sender.max.in.flight.per.bot";
    public static final String MAX_RESCHEDULES = "sender.max.reschedules";
    public static final String RESEND_UNCERTAIN_CLASSES = "sender.resend.uncertain.classes";
    public static final String SENT_MARK_TTL_MS = "sender.sent.mark.ttl.ms";
    public static final String BREAKER_FAILURE_RATE_PERCENT = "sender.breaker.failure.rate.percent";
    public static final String BREAKER_WINDOW_CALLS = "sender.breaker.window.calls";
    public static final String BREAKER_OPEN_MS = "sender.breaker.open.ms";
    public static final String BREAKER_HALF_OPEN_CALLS = "sender.breaker.half.open.calls";
    public static final String STATUS_INTERVAL_MS = "sender.status.interval.ms";
    public static final String KAFKA_PREFIX = "kafka.";
    public static final String DEFAULT_TELEGRAM_API_URL = "https://api.telegram.org/bot";

    private final String bootstrapServers;
    private final String schemaRegistryUrl;
    private final String groupId;
    private final String instanceId;
    private final Topics topics;
    private final boolean consumeBackfill;
    private final String telegramApiUrl;
    private final Map<String, BotToken> bots;
    private final Map<String, HttpProviderConfig> providers;
    private final BudgetMode budgetMode;
    private final String redisUrl;
    private final BudgetLimits budgetLimits;
    private final BudgetConfig budgetConfig;
    private final int maxInFlight;
    private final int bufferMaxRecords;
    private final int bufferMaxRecordsPerBot;
    private final int deferredMaxRecords;
    private final Duration unreadableSchemaGrace;
    private final boolean schemaAutoRegister;
    private final Duration requestTimeout;
    private final Duration connectTimeout;
    private final Duration redisCommandTimeout;
    private final int maxAttempts;
    private final Duration retryBackoff;
    private final Duration retryBackoffMax;
    private final Duration retryAfterJitter;
    private final Duration commitInterval;
    private final Duration botPenaltyWindow;
    private final int botPenaltyMinChats;
    private final int maxInFlightPerBot;
    private final int maxReschedules;
    private final Set<NotificationClass> resendUncertainClasses;
    private final Duration sentMarkTtl;
    private final float breakerFailureRatePercent;
    private final int breakerWindowCalls;
    private final Duration breakerOpen;
    private final int breakerHalfOpenCalls;
    private final Duration statusInterval;
    private final Map<String, String> kafkaProperties;
    private final Map<String, String> schemaRegistryProperties;
    /** Quota mode (PostgreSQL hard cap over the Redis pacing), when {@code quota.jdbc.url} is set. */
    private final dev.sluice.sender.quota.QuotaConfig quota;

    /** Reads and validates the sender configuration; see the class comment for the keys. */
    public static SenderConfig from(Settings s) {
        return new SenderConfig(s);
    }

    public SenderConfig(Settings s) {
        this.bootstrapServers = s.required(BOOTSTRAP_SERVERS);
        this.schemaRegistryUrl = s.required(SCHEMA_REGISTRY_URL);
        for (String one : schemaRegistryUrl.split(",")) {
            url(s, SCHEMA_REGISTRY_URL, one.trim()); // a comma-separated list of registry URLs is allowed
        }
        this.groupId = s.string(GROUP_ID, "sluice-sender");
        this.instanceId = s.string(INSTANCE_ID, defaultInstanceId());
        this.topics = Topics.from(s);
        this.consumeBackfill = s.bool(CONSUME_BACKFILL, true);
        this.telegramApiUrl = url(s, TELEGRAM_API_URL, s.string(TELEGRAM_API_URL, DEFAULT_TELEGRAM_API_URL));
        this.bots = readBots(s);
        this.budgetMode = s.enumValue(BUDGET_MODE, BudgetMode.class, BudgetMode.REDIS);
        this.redisUrl = budgetMode == BudgetMode.REDIS ? redisUrl(s) : s.string(REDIS_URL, null);
        this.providers = HttpProviderConfig.all(s);
        providers.keySet().forEach(id -> {
            if (!bots.containsKey(id)) {
                throw new ConfigException(BOT_PREFIX + id + TOKEN_SUFFIX, "provider '" + id + "' needs '" + BOT_PREFIX + id
                        + TOKEN_SUFFIX + "' (or env " + Settings.envName(BOT_PREFIX + id + TOKEN_SUFFIX)
                        + "): its API key, used as {token}; any non-empty value if it needs none");
            }
        });
        this.budgetConfig = HttpProviderConfig.withProviderLimits(BudgetConfig.from(s), providers);
        this.budgetLimits = budgetConfig.defaults();
        this.maxInFlight = s.positiveInt(MAX_IN_FLIGHT, 16);
        this.bufferMaxRecords = Math.toIntExact(s.longValue(BUFFER_MAX_RECORDS, 10_000,
                v -> v >= 2 && v <= Integer.MAX_VALUE, "an integer >= 2"));
        int maxPoll = maxPollRecords(bufferMaxRecords);
        int perBotDefault = bots.size() <= 1 ? bufferMaxRecords : Math.max(1, bufferMaxRecords - 2 * maxPoll);
        this.bufferMaxRecordsPerBot = Math.toIntExact(s.longValue(BUFFER_MAX_RECORDS_PER_BOT, perBotDefault,
                v -> v >= 1 && v <= bufferMaxRecords, "an integer from 1 to " + BUFFER_MAX_RECORDS + " (" + bufferMaxRecords + ")"));
        this.deferredMaxRecords = Math.toIntExact(s.longValue(DEFERRED_MAX_RECORDS,
                Math.min(Integer.MAX_VALUE, 10L * bufferMaxRecords), v -> v >= 1 && v <= Integer.MAX_VALUE,
                "an integer >= 1"));
        this.unreadableSchemaGrace = s.millis(UNREADABLE_SCHEMA_GRACE_MS, Duration.ofMinutes(1));
        this.schemaAutoRegister = s.bool(SCHEMA_REGISTRY_AUTO_REGISTER, true);
        this.requestTimeout = positiveMillis(s, REQUEST_TIMEOUT_MS, 10_000);
        this.connectTimeout = positiveMillis(s, CONNECT_TIMEOUT_MS, 5_000);
        this.redisCommandTimeout = positiveMillis(s, REDIS_COMMAND_TIMEOUT_MS, 250);
        this.maxAttempts = s.positiveInt(MAX_ATTEMPTS, 5);
        this.retryBackoff = positiveMillis(s, RETRY_BACKOFF_MS, 500);
        this.retryBackoffMax = positiveMillis(s, RETRY_BACKOFF_MAX_MS, 30_000);
        if (retryBackoffMax.compareTo(retryBackoff) < 0) {
            throw Settings.invalid(RETRY_BACKOFF_MAX_MS, Long.toString(retryBackoffMax.toMillis()),
                    "at least " + RETRY_BACKOFF_MS + " (" + retryBackoff.toMillis() + ")");
        }
        this.retryAfterJitter = s.millis(RETRY_AFTER_JITTER_MS, Duration.ofMillis(250));
        this.commitInterval = positiveMillis(s, COMMIT_INTERVAL_MS, 1_000);
        this.botPenaltyWindow = positiveMillis(s, BOT_PENALTY_WINDOW_MS, 1_000);
        this.botPenaltyMinChats = Math.toIntExact(s.longValue(BOT_PENALTY_MIN_CHATS, 2, v -> v >= 2 && v <= 1000,
                "an integer from 2 to 1000"));
        this.maxInFlightPerBot = s.positiveInt(MAX_IN_FLIGHT_PER_BOT, 8);
        this.maxReschedules = Math.toIntExact(s.longValue(MAX_RESCHEDULES, 50, v -> v >= 0 && v <= 1_000_000,
                "an integer from 0 to 1000000"));
        this.resendUncertainClasses = classes(s, RESEND_UNCERTAIN_CLASSES);
        this.sentMarkTtl = positiveMillis(s, SENT_MARK_TTL_MS, Duration.ofDays(7).toMillis());
        this.breakerFailureRatePercent = (float) s.positiveDouble(BREAKER_FAILURE_RATE_PERCENT, 50);
        if (breakerFailureRatePercent > 100) {
            throw Settings.invalid(BREAKER_FAILURE_RATE_PERCENT, Float.toString(breakerFailureRatePercent),
                    "a percentage in (0, 100]");
        }
        this.breakerWindowCalls = s.positiveInt(BREAKER_WINDOW_CALLS, 20);
        this.breakerOpen = positiveMillis(s, BREAKER_OPEN_MS, 5_000);
        this.breakerHalfOpenCalls = s.positiveInt(BREAKER_HALF_OPEN_CALLS, 2);
        this.statusInterval = positiveMillis(s, STATUS_INTERVAL_MS, 5_000);
        this.kafkaProperties = Collections.unmodifiableMap(new TreeMap<>(s.withPrefix(KAFKA_PREFIX)));
        Map<String, String> registry = new TreeMap<>();
        s.asMap().forEach((k, v) -> {
            if (k.startsWith("schema.registry.") || k.equals("basic.auth.user.info")) {
                registry.put(k, v);
            }
        });
        this.schemaRegistryProperties = Collections.unmodifiableMap(registry);
        this.quota = s.string(dev.sluice.sender.quota.QuotaConfig.JDBC_URL, null) == null ? null
                : dev.sluice.sender.quota.QuotaConfig.from(s);
    }

    /**
     * Quota mode for contractual limits ({@code quota.jdbc.url}, {@code quota.<key>.limit}, ...): every grant
     * of a covered key also takes a unit of its PostgreSQL quota; empty when {@code quota.jdbc.url} is unset.
     */
    public java.util.Optional<dev.sluice.sender.quota.QuotaConfig> quota() {
        return java.util.Optional.ofNullable(quota);
    }

    private static Set<NotificationClass> classes(Settings s, String key) {
        String v = s.string(key, "");
        Set<NotificationClass> out = EnumSet.noneOf(NotificationClass.class);
        for (String part : v.split(",")) {
            String name = part.trim();
            if (name.isEmpty()) {
                continue;
            }
            try {
                out.add(NotificationClass.valueOf(name.toUpperCase(java.util.Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw Settings.invalid(key, v, "a comma-separated list of CRITICAL, ROUTINE, COLLAPSIBLE");
            }
        }
        return Collections.unmodifiableSet(out);
    }

    private static Map<String, BotToken> readBots(Settings s) {
        Map<String, BotToken> out = new LinkedHashMap<>();
        s.withPrefix(BOT_PREFIX).forEach((rest, value) -> {
            if (!rest.endsWith(TOKEN_SUFFIX)) {
                return;
            }
            String botId = rest.substring(0, rest.length() - TOKEN_SUFFIX.length());
            String key = BOT_PREFIX + rest;
            if (!BudgetKeys.BOT_ID.matcher(botId).matches()) {
                throw new ConfigException(key, "invalid bot id '" + botId + "' in config '" + key
                        + "': expected " + BudgetKeys.BOT_ID.pattern());
            }
            if (value == null || value.isBlank()) {
                throw new ConfigException(key, "missing token for config '" + key + "' (or env "
                        + Settings.envName(key) + ")");
            }
            out.put(botId, new BotToken(value.trim()));
        });
        if (out.isEmpty()) {
            throw new ConfigException(BOT_PREFIX + "<botId>" + TOKEN_SUFFIX,
                    "no bot configured: set at least one 'bot.<botId>.token' (e.g. bot.alerts.token)");
        }
        return Collections.unmodifiableMap(out);
    }

    private static String redisUrl(Settings s) {
        String v = s.required(REDIS_URL);
        if (!v.startsWith("redis://") && !v.startsWith("rediss://") && !v.startsWith("redis-sentinel://")) {
            throw Settings.invalid(REDIS_URL, v, "a redis:// or rediss:// URL");
        }
        return v;
    }

    private static String url(Settings s, String key, String v) {
        try {
            URI u = URI.create(v);
            if (u.getScheme() == null || !(u.getScheme().equals("http") || u.getScheme().equals("https"))
                    || u.getHost() == null) {
                throw Settings.invalid(key, v, "an http(s) URL");
            }
            return v;
        } catch (IllegalArgumentException e) {
            if (e instanceof ConfigException ce) {
                throw ce;
            }
            throw Settings.invalid(key, v, "an http(s) URL");
        }
    }

    /** {@code redis://user:secret@host} → {@code redis://[redacted]@host}. */
    static String withoutCredentials(String url) {
        return url == null ? null : url.replaceFirst("^([a-z-]+://)[^@/]*@", "$1[redacted]@");
    }

    private static Duration positiveMillis(Settings s, String key, long defaultMs) {
        return Duration.ofMillis(s.positiveLong(key, defaultMs));
    }

    private static String defaultInstanceId() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = "localhost";
        }
        return host + "-" + ProcessHandle.current().pid();
    }

    public String bootstrapServers() {
        return bootstrapServers;
    }

    public String schemaRegistryUrl() {
        return schemaRegistryUrl;
    }

    public String groupId() {
        return groupId;
    }

    public String instanceId() {
        return instanceId;
    }

    public Topics topics() {
        return topics;
    }

    public boolean consumeBackfill() {
        return consumeBackfill;
    }

    /** Base URL in the pengrad form: the token and {@code /method} are appended to it. */
    public String telegramApiUrl() {
        return telegramApiUrl;
    }

    /** Logical bot id → token, in configuration order. */
    public Map<String, BotToken> bots() {
        return bots;
    }

    /** HTTP providers by id ({@code provider.<id>.*}); each id is also a bot of {@link #bots()}. */
    public Map<String, HttpProviderConfig> providers() {
        return providers;
    }

    public BudgetMode budgetMode() {
        return budgetMode;
    }

    /** The Redis URL; null in local mode when none is set. */
    public String redisUrl() {
        return redisUrl;
    }

    public BudgetLimits budgetLimits() {
        return budgetLimits;
    }

    /** Per-bot limits, headroom, AIMD and the Redis outage mode ({@link BudgetConfig}). */
    public BudgetConfig budgetConfig() {
        return budgetConfig;
    }

    public int maxInFlight() {
        return maxInFlight;
    }

    public int bufferMaxRecords() {
        return bufferMaxRecords;
    }

    /** {@code max.poll.records} of the outbox consumer: a quarter of the buffer, at most 500. */
    public int maxPollRecords() {
        return maxPollRecords(bufferMaxRecords);
    }

    private static int maxPollRecords(int bufferMaxRecords) {
        return Math.max(1, Math.min(500, bufferMaxRecords / 4));
    }

    /** {@code sender.buffer.max.records.per.bot}: one bot's buffered records before its further ones are deferred. */
    public int bufferMaxRecordsPerBot() {
        return bufferMaxRecordsPerBot;
    }

    /** {@code sender.deferred.max.records}: deferred offsets remembered before their partitions pause. */
    public int deferredMaxRecords() {
        return deferredMaxRecords;
    }

    /** {@code sender.unreadable.schema.grace.ms}: how long an unknown writer schema id counts as a lagging replica. */
    public Duration unreadableSchemaGrace() {
        return unreadableSchemaGrace;
    }

    /** {@code schema.registry.auto.register}: register the schemas the sender writes (true) or only look them up. */
    public boolean schemaAutoRegister() {
        return schemaAutoRegister;
    }

    public Duration requestTimeout() {
        return requestTimeout;
    }

    public Duration connectTimeout() {
        return connectTimeout;
    }

    public Duration redisCommandTimeout() {
        return redisCommandTimeout;
    }

    public int maxAttempts() {
        return maxAttempts;
    }

    public Duration retryBackoff() {
        return retryBackoff;
    }

    public Duration retryBackoffMax() {
        return retryBackoffMax;
    }

    public Duration retryAfterJitter() {
        return retryAfterJitter;
    }

    public Duration commitInterval() {
        return commitInterval;
    }

    /** Provider calls in flight per bot token in this instance. */
    public int maxInFlightPerBot() {
        return maxInFlightPerBot;
    }

    /** Waits forced by the provider (429, 5xx, gates) before a message ends as EXPIRED. */
    public int maxReschedules() {
        return maxReschedules;
    }

    /** Classes whose messages are resent after a read timeout (UNCERTAIN otherwise). */
    public Set<NotificationClass> resendUncertainClasses() {
        return resendUncertainClasses;
    }

    /** How long an idempotency key ({@code sluice:{bot}:sent:<id>}) lives; longer than any redelivery. */
    public Duration sentMarkTtl() {
        return sentMarkTtl;
    }

    public float breakerFailureRatePercent() {
        return breakerFailureRatePercent;
    }

    public int breakerWindowCalls() {
        return breakerWindowCalls;
    }

    public Duration breakerOpen() {
        return breakerOpen;
    }

    public int breakerHalfOpenCalls() {
        return breakerHalfOpenCalls;
    }

    /** Period of the per-bot reports to {@code sender.status}. */
    public Duration statusInterval() {
        return statusInterval;
    }

    /** 429s of distinct chats of one bot this close together are one bot-wide penalty. */
    public Duration botPenaltyWindow() {
        return botPenaltyWindow;
    }

    /** Distinct chats refused within {@link #botPenaltyWindow()} that mean the whole bot is penalised. */
    public int botPenaltyMinChats() {
        return botPenaltyMinChats;
    }

    /** Kafka client properties given as {@code kafka.<prop>}, prefix removed. May hold secrets: never log. */
    public Map<String, String> kafkaProperties() {
        return kafkaProperties;
    }

    /**
     * Schema registry client settings as given ({@code schema.registry.*}, {@code basic.auth.user.info}),
     * for {@code CachedSchemaRegistryClient.fromConfigs}. May hold credentials: never log.
     */
    public Map<String, String> schemaRegistryProperties() {
        return schemaRegistryProperties;
    }

    @Override
    public String toString() {
        Map<String, String> safeKafka = new TreeMap<>();
        kafkaProperties.forEach((k, v) -> safeKafka.put(k, Settings.redactIfSecret(k, v)));
        return "SenderConfig{instance=" + instanceId + ", group=" + groupId + ", bootstrap=" + bootstrapServers
                + ", topics=" + topics.outboxLive() + (consumeBackfill ? "+" + topics.outboxBackfill() : "")
                + "->" + topics.deliveryResults() + ", bots=" + bots.keySet()
                + (providers.isEmpty() ? "" : ", providers=" + providers.values()) + ", budget=" + budgetMode
                + " " + budgetConfig + ", redis=" + withoutCredentials(redisUrl) + ", maxInFlight=" + maxInFlight
                + ", bufferMaxRecords=" + bufferMaxRecords + (quota == null ? "" : ", quota=" + quota)
                + ", kafka=" + safeKafka + "}";
    }
}
