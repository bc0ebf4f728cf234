package dev.sluice.app;

import dev.sluice.app.ops.OpsConfig;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.sender.SenderConfig;
import dev.sluice.topology.TopologyConfig;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Every config key a long-running Sluice process reads, listed by referencing the config classes'
 * public key constants (so a renamed key changes this list at compile time). Used to check deploy
 * files: every {@code SLUICE_*} variable in {@code docker-compose.yml} must map to one of these
 * ({@link Settings#envName}).
 *
 * <p>Open-ended families: {@code kafka.*} passes any Kafka client property through (SASL_SSL, mTLS);
 * {@code bot.<id>.token} holds one bot's token (sender only).
 */
public final class ConfigKeys {
    /** Read by logback.xml directly as {@code SLUICE_LOG_FORMAT} / {@code SLUICE_LOG_LEVEL}. */
    public static final String LOG_FORMAT = "log.format";
    public static final String LOG_LEVEL = "log.level";

    private static final Pattern BOT_TOKEN = Pattern.compile(Pattern.quote(SenderConfig.BOT_PREFIX) + "[a-z0-9][a-z0-9_-]*"
            + Pattern.quote(SenderConfig.TOKEN_SUFFIX));

    private ConfigKeys() {
    }

    /** Keys of {@code sluice topology}. */
    public static Set<String> topology() {
        Set<String> keys = common();
        keys.addAll(List.of(TopologyConfig.BOOTSTRAP_SERVERS, TopologyConfig.SCHEMA_REGISTRY_URL, TopologyConfig.APPLICATION_ID,
                TopologyConfig.PROCESSING_GUARANTEE, TopologyConfig.STATE_DIR, TopologyConfig.NUM_STREAM_THREADS,
                TopologyConfig.COMMIT_INTERVAL_MS));
        return keys;
    }

    /** Keys of {@code sluice sender} (besides {@code bot.<id>.token}). */
    public static Set<String> sender() {
        Set<String> keys = common();
        keys.addAll(List.of(SenderConfig.BOOTSTRAP_SERVERS, SenderConfig.SCHEMA_REGISTRY_URL, SenderConfig.GROUP_ID,
                SenderConfig.INSTANCE_ID, SenderConfig.CONSUME_BACKFILL, SenderConfig.TELEGRAM_API_URL, SenderConfig.BUDGET_MODE,
                SenderConfig.REDIS_URL, SenderConfig.GLOBAL_RATE, SenderConfig.GLOBAL_BURST, SenderConfig.CHAT_RATE,
                SenderConfig.CHAT_BURST, SenderConfig.MAX_IN_FLIGHT, SenderConfig.BUFFER_MAX_RECORDS,
                SenderConfig.REQUEST_TIMEOUT_MS, SenderConfig.CONNECT_TIMEOUT_MS, SenderConfig.REDIS_COMMAND_TIMEOUT_MS,
                SenderConfig.MAX_ATTEMPTS, SenderConfig.RETRY_BACKOFF_MS, SenderConfig.RETRY_BACKOFF_MAX_MS,
                SenderConfig.RETRY_AFTER_JITTER_MS, SenderConfig.COMMIT_INTERVAL_MS,
                SenderConfig.BOT_PENALTY_WINDOW_MS, SenderConfig.BOT_PENALTY_MIN_CHATS, SenderConfig.MAX_IN_FLIGHT_PER_BOT,
                SenderConfig.MAX_RESCHEDULES, SenderConfig.RESEND_UNCERTAIN_CLASSES, SenderConfig.SENT_MARK_TTL_MS,
                SenderConfig.BREAKER_FAILURE_RATE_PERCENT, SenderConfig.BREAKER_WINDOW_CALLS, SenderConfig.BREAKER_OPEN_MS,
                SenderConfig.BREAKER_HALF_OPEN_CALLS, SenderConfig.STATUS_INTERVAL_MS));
        return keys;
    }

    /** Whether {@code key} is read by the given process ({@code topology} or {@code sender}). */
    public static boolean isKnown(String process, String key) {
        Set<String> keys = switch (process) {
            case "topology" -> topology();
            case "sender" -> sender();
            default -> throw new IllegalArgumentException("unknown process '" + process + "': expected topology or sender");
        };
        return keys.contains(key)
                || key.startsWith(TopologyConfig.KAFKA_PREFIX) && key.length() > TopologyConfig.KAFKA_PREFIX.length()
                || process.equals("sender") && BOT_TOKEN.matcher(key).matches();
    }

    /**
     * The config key an environment variable sets for a process, or null when none: tries the known
     * keys by their env form first, then the families ({@code SLUICE_BOT_<ID>_TOKEN}, {@code SLUICE_KAFKA_*}).
     */
    public static String keyForEnv(String process, String envVariable) {
        Set<String> keys = process.equals("topology") ? topology() : sender();
        for (String k : keys) {
            if (Settings.envName(k).equals(envVariable)) {
                return k;
            }
        }
        // Settings maps an unknown SLUICE_A_B to a.b; accept it when that lands in a family.
        if (!envVariable.startsWith("SLUICE_")) {
            return null;
        }
        String dotted = envVariable.substring("SLUICE_".length()).toLowerCase().replace('_', '.');
        return isKnown(process, dotted) ? dotted : null;
    }

    private static Set<String> common() {
        Set<String> keys = new TreeSet<>(OpsConfig.keys());
        keys.addAll(List.of(LOG_FORMAT, LOG_LEVEL,
                CachedSchemaRegistryClient.BASIC_AUTH_USER_INFO_CONFIG, CachedSchemaRegistryClient.CONNECT_TIMEOUT_MS_CONFIG,
                CachedSchemaRegistryClient.REQUEST_TIMEOUT_MS_CONFIG, CachedSchemaRegistryClient.RETRY_MAX_MS_CONFIG,
                Topics.NOTIFICATIONS, Topics.NOTIFICATIONS_BACKFILL, Topics.DLQ, Topics.OUTBOX_LIVE, Topics.OUTBOX_BACKFILL,
                Topics.DELIVERY_RESULTS, Topics.CHAT_EVENTS, Topics.SENDER_STATUS, Topics.PREFERENCES));
        return keys;
    }
}
