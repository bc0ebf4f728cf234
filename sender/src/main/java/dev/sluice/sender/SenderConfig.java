package dev.sluice.sender;

import dev.sluice.config.ConfigException;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetKeys;
import dev.sluice.sender.budget.RedisConnectionConfig;
import dev.sluice.sender.budget.quota.QuotaConfig;
import dev.sluice.sender.http.HttpProviderConfig;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import dev.sluice.avro.NotificationClass;
import dev.sluice.sender.provider.BotToken;

/**
 * Immutable configuration of one sender instance, read once from {@link Settings} and validated; every
 * error is a {@link ConfigException} naming the key and the value (tokens redacted). The keys, with their
 * defaults, rules and docs, are defined in {@link SenderKeys} ({@link SenderKeys#ALL}: every key and family read
 * here, including the budget's, the quota's, {@code redis.*}, {@code bot.<id>.token}, {@code provider.<id>.*} and
 * {@code kafka.<prop>}).
 */
public final class SenderConfig {
    private final String bootstrapServers;
    private final String groupId;
    private final String instanceId;
    private final Topics topics;
    private final boolean consumeBackfill;
    private final String telegramApiUrl;
    private final Map<String, BotToken> bots;
    private final Map<String, HttpProviderConfig> providers;
    private final BudgetMode budgetMode;
    private final String redisUrl;
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
    private final Duration retryAfterMax;
    private final Duration tokenRecheck;
    private final Duration commitInterval;
    private final Duration botPenaltyWindow;
    private final int botPenaltyMinChats;
    private final int maxInFlightPerBot;
    private final int maxReschedules;
    private final Set<NotificationClass> resendUncertainClasses;
    private final Duration sentMarkTtl;
    private final Duration sentMarkFlushInterval;
    private final float breakerFailureRatePercent;
    private final int breakerWindowCalls;
    private final Duration breakerOpen;
    private final int breakerHalfOpenCalls;
    private final Duration statusInterval;
    private final Map<String, String> kafkaProperties;
    private final Map<String, String> schemaRegistryProperties;
    /** Quota mode (PostgreSQL hard cap over the Redis pacing), when {@code quota.jdbc.url} is set. */
    private final QuotaConfig quota;

    /** Reads and validates the sender configuration; see the class comment for the keys. */
    public static SenderConfig from(Settings s) {
        return new SenderConfig(s);
    }

    public SenderConfig(Settings s) {
        this.bootstrapServers = SenderKeys.BOOTSTRAP_SERVERS.require(s);
        SenderKeys.SCHEMA_REGISTRY_URL.require(s);
        this.groupId = SenderKeys.GROUP_ID.read(s);
        String instance = SenderKeys.INSTANCE_ID.read(s);
        this.instanceId = instance != null ? instance : defaultInstanceId();
        this.topics = Topics.from(s);
        this.consumeBackfill = SenderKeys.CONSUME_BACKFILL.read(s);
        this.telegramApiUrl = SenderKeys.botApiBase(SenderKeys.TELEGRAM_API_URL.read(s));
        this.bots = readBots(s);
        this.budgetMode = SenderKeys.BUDGET_MODE.read(s);
        this.redisUrl = budgetMode == BudgetMode.REDIS ? RedisConnectionConfig.URL.require(s)
                : s.string(RedisConnectionConfig.URL.name(), null);
        this.providers = HttpProviderConfig.all(s);
        providers.keySet().forEach(id -> {
            if (!bots.containsKey(id)) {
                String key = SenderKeys.BOT_PREFIX + id + SenderKeys.TOKEN_SUFFIX;
                throw new ConfigException(key, "provider '" + id + "' needs '" + key + "' (or env "
                        + Settings.envName(key) + "): its API key, used as {token}; any non-empty value if it needs none");
            }
        });
        this.budgetConfig = HttpProviderConfig.withProviderLimits(BudgetConfig.from(s), providers);
        this.maxInFlight = Math.toIntExact(SenderKeys.MAX_IN_FLIGHT.read(s));
        this.bufferMaxRecords = Math.toIntExact(SenderKeys.BUFFER_MAX_RECORDS.read(s));
        int maxPoll = maxPollRecords(bufferMaxRecords);
        int perBotDefault = bots.size() <= 1 ? bufferMaxRecords : Math.max(1, bufferMaxRecords - 2 * maxPoll);
        Long perBot = SenderKeys.BUFFER_MAX_RECORDS_PER_BOT.read(s);
        if (perBot != null && perBot > bufferMaxRecords) {
            throw Settings.invalid(SenderKeys.BUFFER_MAX_RECORDS_PER_BOT.name(), Long.toString(perBot),
                    "an integer from 1 to " + SenderKeys.BUFFER_MAX_RECORDS.name() + " (" + bufferMaxRecords + ")");
        }
        this.bufferMaxRecordsPerBot = perBot == null ? perBotDefault : Math.toIntExact(perBot);
        Long deferred = SenderKeys.DEFERRED_MAX_RECORDS.read(s);
        this.deferredMaxRecords = deferred == null ? (int) Math.min(Integer.MAX_VALUE, 10L * bufferMaxRecords)
                : Math.toIntExact(deferred);
        this.unreadableSchemaGrace = SenderKeys.UNREADABLE_SCHEMA_GRACE_MS.read(s);
        this.schemaAutoRegister = SenderKeys.SCHEMA_REGISTRY_AUTO_REGISTER.read(s);
        this.requestTimeout = SenderKeys.REQUEST_TIMEOUT_MS.read(s);
        this.connectTimeout = SenderKeys.CONNECT_TIMEOUT_MS.read(s);
        this.redisCommandTimeout = RedisConnectionConfig.COMMAND_TIMEOUT_MS.read(s);
        this.maxAttempts = Math.toIntExact(SenderKeys.MAX_ATTEMPTS.read(s));
        this.retryBackoff = SenderKeys.RETRY_BACKOFF_MS.read(s);
        this.retryBackoffMax = SenderKeys.RETRY_BACKOFF_MAX_MS.read(s);
        if (retryBackoffMax.compareTo(retryBackoff) < 0) {
            throw Settings.invalid(SenderKeys.RETRY_BACKOFF_MAX_MS.name(), Long.toString(retryBackoffMax.toMillis()),
                    "at least " + SenderKeys.RETRY_BACKOFF_MS.name() + " (" + retryBackoff.toMillis() + ")");
        }
        this.retryAfterJitter = SenderKeys.RETRY_AFTER_JITTER_MS.read(s);
        this.retryAfterMax = SenderKeys.RETRY_AFTER_MAX_MS.read(s);
        this.tokenRecheck = SenderKeys.TOKEN_RECHECK_MS.read(s);
        this.commitInterval = SenderKeys.COMMIT_INTERVAL_MS.read(s);
        this.botPenaltyWindow = SenderKeys.BOT_PENALTY_WINDOW_MS.read(s);
        this.botPenaltyMinChats = Math.toIntExact(SenderKeys.BOT_PENALTY_MIN_CHATS.read(s));
        this.maxInFlightPerBot = Math.toIntExact(SenderKeys.MAX_IN_FLIGHT_PER_BOT.read(s));
        this.maxReschedules = Math.toIntExact(SenderKeys.MAX_RESCHEDULES.read(s));
        this.resendUncertainClasses = SenderKeys.RESEND_UNCERTAIN_CLASSES.read(s);
        this.sentMarkTtl = SenderKeys.SENT_MARK_TTL_MS.read(s);
        this.sentMarkFlushInterval = SenderKeys.SENT_MARK_FLUSH_INTERVAL_MS.read(s);
        this.breakerFailureRatePercent = SenderKeys.BREAKER_FAILURE_RATE_PERCENT.read(s).floatValue();
        this.breakerWindowCalls = Math.toIntExact(SenderKeys.BREAKER_WINDOW_CALLS.read(s));
        this.breakerOpen = SenderKeys.BREAKER_OPEN_MS.read(s);
        this.breakerHalfOpenCalls = Math.toIntExact(SenderKeys.BREAKER_HALF_OPEN_CALLS.read(s));
        this.statusInterval = SenderKeys.STATUS_INTERVAL_MS.read(s);
        this.kafkaProperties = Collections.unmodifiableMap(new TreeMap<>(s.withPrefix(SenderKeys.KAFKA_PREFIX)));
        Map<String, String> registry = new TreeMap<>();
        s.asMap().forEach((k, v) -> {
            if (k.startsWith("schema.registry.") || k.equals("basic.auth.user.info")) {
                registry.put(k, v);
            }
        });
        this.schemaRegistryProperties = Collections.unmodifiableMap(registry);
        this.quota = QuotaConfig.fromIfSet(s).orElse(null);
    }

    /**
     * Quota mode for contractual limits ({@code quota.jdbc.url}, {@code quota.<key>.limit}, ...): every grant
     * of a covered key also takes a unit of its PostgreSQL quota; empty when {@code quota.jdbc.url} is unset.
     */
    public java.util.Optional<QuotaConfig> quota() {
        return java.util.Optional.ofNullable(quota);
    }

    private static Map<String, BotToken> readBots(Settings s) {
        Map<String, BotToken> out = new LinkedHashMap<>();
        s.withPrefix(SenderKeys.BOT_PREFIX).forEach((rest, value) -> {
            if (!rest.endsWith(SenderKeys.TOKEN_SUFFIX)) {
                return;
            }
            String botId = rest.substring(0, rest.length() - SenderKeys.TOKEN_SUFFIX.length());
            String key = SenderKeys.BOT_PREFIX + rest;
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
            throw new ConfigException(SenderKeys.BOT_PREFIX + "<botId>" + SenderKeys.TOKEN_SUFFIX,
                    "no bot configured: set at least one 'bot.<botId>.token' (e.g. bot.alerts.token)");
        }
        return Collections.unmodifiableMap(out);
    }

    private static String defaultInstanceId() {
        try {
            return InetAddress.getLocalHost().getHostName() + "-" + ProcessHandle.current().pid();
        } catch (UnknownHostException e) {
            return "localhost-" + ProcessHandle.current().pid();
        }
    }

    public String bootstrapServers() {
        return bootstrapServers;
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

    /** {@code sender.retry.after.max.ms}: the longest provider wait honoured at once (a longer one asks again then). */
    public Duration retryAfterMax() { return retryAfterMax; }

    /** {@code sender.token.recheck.ms}: how often one call re-checks a bot whose token the provider rejected. */
    public Duration tokenRecheck() { return tokenRecheck; }

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

    /** See {@link SenderKeys#SENT_MARK_FLUSH_INTERVAL_MS}. */
    public Duration sentMarkFlushInterval() {
        return sentMarkFlushInterval;
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
        Map<String, String> safeKafka = new TreeMap<>(); // and redis://user:secret@host -> redis://[redacted]@host
        String redis = redisUrl == null ? null : redisUrl.replaceFirst("^([a-z-]+://)[^@/]*@", "$1[redacted]@");
        kafkaProperties.forEach((k, v) -> safeKafka.put(k, Settings.redactIfSecret(k, v)));
        return "SenderConfig{instance=" + instanceId + ", group=" + groupId + ", bootstrap=" + bootstrapServers
                + ", topics=" + topics.outboxLive() + (consumeBackfill ? "+" + topics.outboxBackfill() : "")
                + "->" + topics.deliveryResults() + ", bots=" + bots.keySet()
                + (providers.isEmpty() ? "" : ", providers=" + providers.values()) + ", budget=" + budgetMode
                + " " + budgetConfig + ", redis=" + redis + ", maxInFlight=" + maxInFlight
                + ", bufferMaxRecords=" + bufferMaxRecords + (quota == null ? "" : ", quota=" + quota)
                + ", kafka=" + safeKafka + "}";
    }
}
