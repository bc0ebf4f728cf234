package dev.sluice.app;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;

import dev.sluice.app.ops.OpsConfig;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.sender.SenderKeys;
import dev.sluice.topology.TopologyConfig;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Every config key a long-running Sluice process reads. Used to check deploy files: every {@code SLUICE_*}
 * variable in {@code docker-compose.yml} must map to one of these ({@link Settings#envName}).
 *
 * <p>The sender's list is derived from its key definitions ({@link SenderKeys#ALL}: each key defined once with
 * its default, rule and doc, plus the families {@code bot.<id>.token}, {@code bot.<id>.rate.per.s},
 * {@code bot.<id>.paid.broadcast}, {@code provider.<id>.*}, {@code quota.<key>.limit},
 * {@code quota.<key>.window.ms} and {@code kafka.*}). The topology's still comes from the public key constants of
 * {@link TopologyConfig} (so a renamed key changes this list at compile time), plus {@code kafka.*}.
 */
public final class ConfigKeys {
    /** Read by logback.xml directly as {@code SLUICE_LOG_FORMAT} / {@code SLUICE_LOG_LEVEL}. */
    public static final String LOG_FORMAT = "log.format";
    public static final String LOG_LEVEL = "log.level";

    private static final Pattern KEY = Pattern.compile("[a-z0-9]+(\\.[a-z0-9-]+)+");

    private ConfigKeys() {
    }

    /** Keys of {@code sluice topology}: every key constant of {@link TopologyConfig}, plus the common ones. */
    public static Set<String> topology() {
        Set<String> keys = common();
        keys.addAll(keyConstants(TopologyConfig.class));
        return keys;
    }

    /** Keys of {@code sluice sender} (besides the families): every key defined in {@link SenderKeys#ALL}. */
    public static Set<String> sender() {
        Set<String> keys = common();
        keys.addAll(SenderKeys.ALL.names());
        return keys;
    }

    /**
     * The public static String constants of a config class that hold a whole dotted key, e.g.
     * {@code digest.flush.interval.ms}; prefixes ({@code kafka.}), suffixes ({@code .token}) and
     * {@code DEFAULT_*} values are not keys. Reflection, so a key added to a config class is known here
     * without a second list to keep in step.
     */
    static Set<String> keyConstants(Class<?> configClass) {
        Set<String> keys = new TreeSet<>();
        for (Field f : configClass.getFields()) {
            int m = f.getModifiers();
            if (Modifier.isStatic(m) && f.getType() == String.class && !f.getName().startsWith("DEFAULT_")) {
                try {
                    String v = (String) f.get(null);
                    if (v != null && KEY.matcher(v).matches()) {
                        keys.add(v);
                    }
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException("cannot read " + configClass.getSimpleName() + "." + f.getName(), e);
                }
            }
        }
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
                || process.equals("sender") && SenderKeys.ALL.accepts(key);
    }

    /**
     * The config key an environment variable sets for a process, or null when none: tries the known
     * keys by their env form first, then the families ({@code SLUICE_BOT_<ID>_TOKEN}, {@code SLUICE_KAFKA_*},
     * {@code SLUICE_PROVIDER_<ID>_URL_TEMPLATE}, {@code SLUICE_QUOTA_<KEY>_LIMIT}, ...).
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
                Topics.DELIVERY_RESULTS, Topics.CHAT_EVENTS, Topics.SENDER_STATUS, Topics.PREFERENCES, Topics.OUTBOX_DLQ,
                Topics.DELIVERY_PARTS));
        return keys;
    }
}
