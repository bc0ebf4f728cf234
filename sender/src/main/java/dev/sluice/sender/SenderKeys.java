package dev.sluice.sender;

import dev.sluice.avro.NotificationClass;
import dev.sluice.config.ConfigFamily;
import dev.sluice.config.ConfigKey;
import dev.sluice.config.ConfigKeySet;
import dev.sluice.config.Settings;
import dev.sluice.sender.budget.BudgetConfig;
import dev.sluice.sender.budget.BudgetKeys;
import dev.sluice.sender.budget.RedisConnectionConfig;
import dev.sluice.sender.budget.quota.QuotaConfig;
import dev.sluice.sender.http.HttpProviderConfig;
import java.net.URI;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The keys of a sender, each defined once (name, default, rule, doc), and {@link #ALL}: every key and key family
 * {@code sluice sender} reads, which is the list a deploy file or the environment may set ({@code ConfigKeys}).
 * Budget keys are defined in {@link BudgetConfig}, quota keys in {@link QuotaConfig}, the Redis connection in
 * {@link RedisConnectionConfig}, HTTP providers in {@link HttpProviderConfig}. Constants only.
 */
public final class SenderKeys {
    public static final String BOT_PREFIX = "bot.";
    public static final String TOKEN_SUFFIX = ".token";
    public static final String KAFKA_PREFIX = "kafka.";
    public static final String DEFAULT_TELEGRAM_API_URL = "https://api.telegram.org/bot";

    public static final ConfigKey<String> BOOTSTRAP_SERVERS = ConfigKey.string("bootstrap.servers", null,
            "the Kafka brokers; required");
    public static final ConfigKey<String> SCHEMA_REGISTRY_URL = ConfigKey.string("schema.registry.url", null,
            SenderKeys::httpUrls, "an http(s) URL", "the schema registry, a comma-separated list of http(s) URLs; "
                    + "required. Other schema.registry.* keys and basic.auth.user.info go to the registry client");
    public static final ConfigKey<String> GROUP_ID = ConfigKey.string("sender.group.id", "sluice-sender",
            "the senders' consumer group");
    public static final ConfigKey<String> INSTANCE_ID = ConfigKey.string("sender.instance.id", null,
            "written into results and status reports; default <hostname>-<pid>");
    public static final ConfigKey<Boolean> CONSUME_BACKFILL = ConfigKey.bool("sender.consume.backfill", true,
            "also consume outbox.backfill");
    public static final ConfigKey<String> TELEGRAM_API_URL = ConfigKey.string("telegram.api.url",
            DEFAULT_TELEGRAM_API_URL, SenderKeys::httpUrls, "an http(s) URL",
            "the Bot API's base URL (https://api.telegram.org, or a local Bot API server); /bot, the token and /method "
                    + "are appended (a URL already ending in /bot is taken as is)");
    public static final ConfigKey<BudgetMode> BUDGET_MODE = ConfigKey.oneOf("budget.mode", BudgetMode.class,
            BudgetMode.REDIS, "redis: one budget shared by every replica; local: in-process (each replica alone)");
    public static final ConfigKey<Long> MAX_IN_FLIGHT = ConfigKey.positiveInt("sender.max.in.flight", 16,
            "concurrent budget and provider calls per instance");
    public static final ConfigKey<Long> BUFFER_MAX_RECORDS = ConfigKey.integer("sender.buffer.max.records", 10_000L,
            v -> v >= 2 && v <= Integer.MAX_VALUE, "an integer >= 2", "records held in lanes before partitions pause");
    /** Default (null here): the buffer less two polls with several bots, the whole buffer with one (see SenderConfig). */
    public static final ConfigKey<Long> BUFFER_MAX_RECORDS_PER_BOT = ConfigKey.integer("sender.buffer.max.records.per.bot",
            null, v -> v >= 1 && v <= Integer.MAX_VALUE, "an integer from 1 to sender.buffer.max.records",
            "records of one bot held in lanes; the bot's further records are deferred (read again later) while the "
                    + "partitions go on for other bots; default sender.buffer.max.records - 2 x max.poll.records with "
                    + "several bots, the whole buffer with one");
    /** Default (null here): 10 x sender.buffer.max.records. */
    public static final ConfigKey<Long> DEFERRED_MAX_RECORDS = ConfigKey.integer("sender.deferred.max.records", null,
            v -> v >= 1 && v <= Integer.MAX_VALUE, "an integer >= 1",
            "deferred offsets remembered (no payload); at the cap the partitions holding them pause; default "
                    + "10 x sender.buffer.max.records");
    public static final ConfigKey<Duration> UNREADABLE_SCHEMA_GRACE_MS = ConfigKey.millis(
            "sender.unreadable.schema.grace.ms", Duration.ofMinutes(1), d -> !d.isNegative(),
            "a duration in milliseconds >= 0", "how long an outbox record whose writer schema id the registry does "
                    + "not know (40403: a replica that lags) is read again before it is dead-lettered");
    public static final ConfigKey<Boolean> SCHEMA_REGISTRY_AUTO_REGISTER = ConfigKey.bool(
            dev.sluice.schemas.SpecificAvroSerializer.AUTO_REGISTER_CONFIG, true,
            "false: look the sender's schemas up (POST /subjects/{s}) instead of registering them, for read-only "
                    + "registry credentials");
    public static final ConfigKey<Duration> REQUEST_TIMEOUT_MS = ConfigKey.positiveMillis("sender.request.timeout.ms",
            10_000, "whole provider call");
    public static final ConfigKey<Duration> CONNECT_TIMEOUT_MS = ConfigKey.positiveMillis("sender.connect.timeout.ms",
            5_000, "provider connect");
    public static final ConfigKey<Long> MAX_ATTEMPTS = ConfigKey.positiveInt("sender.max.attempts", 5,
            "provider calls per message for 5xx and I/O errors");
    public static final ConfigKey<Duration> RETRY_BACKOFF_MS = ConfigKey.positiveMillis("sender.retry.backoff.ms", 500,
            "exponential backoff base (full jitter)");
    public static final ConfigKey<Duration> RETRY_BACKOFF_MAX_MS = ConfigKey.positiveMillis(
            "sender.retry.backoff.max.ms", 30_000, "exponential backoff cap, at least sender.retry.backoff.ms");
    public static final ConfigKey<Duration> RETRY_AFTER_JITTER_MS = ConfigKey.millis("sender.retry.after.jitter.ms",
            Duration.ofMillis(250), d -> !d.isNegative(), "a duration in milliseconds >= 0",
            "one-sided jitter added to a 429's retry_after");
    public static final ConfigKey<Duration> RETRY_AFTER_MAX_MS = ConfigKey.millis("sender.retry.after.max.ms",
            dev.sluice.sender.telegram.RetryAfterCap.DEFAULT,
            d -> d.toMillis() >= 1 && d.compareTo(dev.sluice.sender.telegram.RetryAfterCap.MAX_SETTING) <= 0,
            "a duration in milliseconds from 1 to 86400000 (1 day)", "cap on a provider's wait (Telegram retry_after, "
                    + "HTTP Retry-After) and on the penalty gate it writes; a longer wait asks again at the cap");
    public static final ConfigKey<Duration> TOKEN_RECHECK_MS = ConfigKey.positiveMillis("sender.token.recheck.ms",
            60_000, "a bot whose token the provider rejected (401, 404) has its lanes parked; one call re-checks the "
                    + "token this often (its messages wait, or expire at their deadline, never FAILED)");
    public static final ConfigKey<Duration> COMMIT_INTERVAL_MS = ConfigKey.positiveMillis("sender.commit.interval.ms",
            1_000, "offset commit period");
    public static final ConfigKey<Duration> BOT_PENALTY_WINDOW_MS = ConfigKey.positiveMillis(
            "sender.penalty.bot.window.ms", 1_000, "a 429 is attributed to the whole bot when at least "
                    + "sender.penalty.bot.min.chats distinct chats of it were refused within this window (Telegram's "
                    + "429 does not name its scope)");
    public static final ConfigKey<Long> BOT_PENALTY_MIN_CHATS = ConfigKey.integer("sender.penalty.bot.min.chats", 2L,
            v -> v >= 2 && v <= 1000, "an integer from 2 to 1000", "see sender.penalty.bot.window.ms");
    public static final ConfigKey<Long> MAX_IN_FLIGHT_PER_BOT = ConfigKey.positiveInt("sender.max.in.flight.per.bot", 8,
            "provider calls in flight per bot token: one call in flight caps a bot at 1/round-trip (about 20/s at "
                    + "50 ms); rate x a slow round trip (30/s x 250 ms) ~ 8 reaches the full rate, and the cap bounds "
                    + "what a bot-wide 429 or a crash multiplies");
    public static final ConfigKey<Long> MAX_RESCHEDULES = ConfigKey.integer("sender.max.reschedules", 50L,
            v -> v >= 0 && v <= 1_000_000, "an integer from 0 to 1000000",
            "waits forced by the provider (429, 5xx, penalty gates) before a message ends EXPIRED");
    private static final String CLASSES_RULE = "a comma-separated list of CRITICAL, ROUTINE, COLLAPSIBLE";
    public static final ConfigKey<Set<NotificationClass>> RESEND_UNCERTAIN_CLASSES = ConfigKey.define(
            "sender.resend.uncertain.classes", Set.of(), SenderKeys::classes, v -> true, CLASSES_RULE,
            "classes resent after a read timeout, e.g. CRITICAL; default none (every class ends UNCERTAIN)");
    public static final ConfigKey<Duration> SENT_MARK_TTL_MS = ConfigKey.positiveMillis("sender.sent.mark.ttl.ms",
            Duration.ofDays(14).toMillis(), "life of the idempotency key sluice:{bot}:sent:<id>; at least the outbox "
                    + "topics' retention.ms + segment.ms (a record stays readable until its segment is deleted; Kafka's "
                    + "defaults 7 + 7 days), checked against the broker at start (a warning when shorter)");
    public static final ConfigKey<Duration> SENT_MARK_FLUSH_INTERVAL_MS = ConfigKey.positiveMillis(
            "sender.sent.mark.flush.interval.ms", 500, "when the sent marks live in the budget's Redis, the grant "
                    + "writes the in-flight mark and the SENT and DONE marks ride on the next budget call (any bot's on one "
                    + "Redis node, one of the same slot on a cluster) instead of a SET each (a SENT waits up to 50 ms for its DONE, "
                    + "which replaces it); what no call carried within this interval is written by the flush, one script call per "
                    + "64 marks (per slot on a cluster) "
                    + "(a mark not yet written costs a message read again after a crash a lookup on the results topic)");
    public static final ConfigKey<Double> BREAKER_FAILURE_RATE_PERCENT = ConfigKey.number(
            "sender.breaker.failure.rate.percent", 50.0, v -> v > 0 && v <= 100, "a percentage in (0, 100]",
            "per-bot circuit breaker over the provider (5xx and I/O errors): failure rate that opens it");
    public static final ConfigKey<Long> BREAKER_WINDOW_CALLS = ConfigKey.positiveInt("sender.breaker.window.calls", 20,
            "calls the breaker's failure rate is measured over");
    public static final ConfigKey<Duration> BREAKER_OPEN_MS = ConfigKey.positiveMillis("sender.breaker.open.ms", 5_000,
            "how long an open breaker refuses calls");
    public static final ConfigKey<Long> BREAKER_HALF_OPEN_CALLS = ConfigKey.positiveInt("sender.breaker.half.open.calls",
            2, "trial calls of a half-open breaker");
    public static final ConfigKey<Duration> STATUS_INTERVAL_MS = ConfigKey.positiveMillis("sender.status.interval.ms",
            5_000, "period of the per-bot backlog reports to sender.status");

    public static final ConfigFamily BOT_TOKENS = ConfigFamily.perId(BOT_PREFIX, BudgetKeys.BOT_ID.pattern(),
            TOKEN_SUFFIX, "a bot's token (at least one); secret, never printed");
    public static final ConfigFamily KAFKA = ConfigFamily.prefix(KAFKA_PREFIX,
            "passed to the consumer and producer without the prefix (SASL_SSL etc.); may hold secrets");

    /** The sender's own keys. */
    public static final ConfigKeySet SENDER = ConfigKeySet.of(List.of(BOOTSTRAP_SERVERS, SCHEMA_REGISTRY_URL, GROUP_ID,
            INSTANCE_ID, CONSUME_BACKFILL, TELEGRAM_API_URL, BUDGET_MODE, MAX_IN_FLIGHT, BUFFER_MAX_RECORDS,
            BUFFER_MAX_RECORDS_PER_BOT, DEFERRED_MAX_RECORDS, UNREADABLE_SCHEMA_GRACE_MS, SCHEMA_REGISTRY_AUTO_REGISTER,
            REQUEST_TIMEOUT_MS, CONNECT_TIMEOUT_MS, MAX_ATTEMPTS, RETRY_BACKOFF_MS, RETRY_BACKOFF_MAX_MS,
            RETRY_AFTER_JITTER_MS, RETRY_AFTER_MAX_MS, TOKEN_RECHECK_MS, COMMIT_INTERVAL_MS, BOT_PENALTY_WINDOW_MS, BOT_PENALTY_MIN_CHATS,
            MAX_IN_FLIGHT_PER_BOT, MAX_RESCHEDULES, RESEND_UNCERTAIN_CLASSES, SENT_MARK_TTL_MS, SENT_MARK_FLUSH_INTERVAL_MS,
            BREAKER_FAILURE_RATE_PERCENT, BREAKER_WINDOW_CALLS, BREAKER_OPEN_MS, BREAKER_HALF_OPEN_CALLS,
            STATUS_INTERVAL_MS), List.of(BOT_TOKENS, KAFKA, HttpProviderConfig.FAMILY));

    /** Every key and family {@link SenderConfig} reads: its own, the Redis connection, the budget and the quota. */
    public static final ConfigKeySet ALL = SENDER.plus(RedisConnectionConfig.KEYS).plus(BudgetConfig.KEYS)
            .plus(QuotaConfig.KEYS);

    private SenderKeys() {
    }

    /** Each comma-separated part an http(s) URL with a host. */
    /**
     * The Bot API base in pengrad's form, {@code <url>/bot} (the token and {@code /method} follow): {@code /bot} is added
     * when missing, so the documented {@code https://api.telegram.org} and the default {@code .../bot} mean the same (a
     * URL without it used to send every call to {@code <host>:<port><token>}, and every message ended FAILED).
     */
    static String botApiBase(String url) {
        String u = url.trim();
        while (u.endsWith("/")) {
            u = u.substring(0, u.length() - 1);
        }
        return u.endsWith("/bot") ? u : u + "/bot";
    }

    private static boolean httpUrls(String v) {
        for (String one : v.split(",")) {
            try {
                URI u = URI.create(one.trim());
                if (u.getScheme() == null || !(u.getScheme().equals("http") || u.getScheme().equals("https"))
                        || u.getHost() == null) {
                    return false;
                }
            } catch (IllegalArgumentException e) {
                return false;
            }
        }
        return true;
    }

    private static Set<NotificationClass> classes(String key, String v) {
        Set<NotificationClass> out = EnumSet.noneOf(NotificationClass.class);
        for (String part : v.split(",")) {
            String name = part.trim();
            if (name.isEmpty()) {
                continue;
            }
            try {
                out.add(NotificationClass.valueOf(name.toUpperCase(Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw Settings.invalid(key, v, CLASSES_RULE);
            }
        }
        return Collections.unmodifiableSet(out);
    }

}
