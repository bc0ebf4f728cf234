package dev.sluice.app;

import dev.sluice.config.ConfigException;
import dev.sluice.config.ConfigFamily;
import dev.sluice.config.Settings;
import dev.sluice.sender.SenderKeys;
import dev.sluice.sender.http.HttpProviderConfig;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;

/**
 * The start-up check of every key a command is given (--config file, {@code -D}, {@code SLUICE_*} environment) against
 * the union of the keys any Sluice component reads ({@link ConfigKeys#topology()}, {@link ConfigKeys#sender()} and their
 * families: {@code kafka.*}, {@code bot.<id>.token}, {@code provider.<id>.<key>}, {@code quota.<key>.limit}, ...). One
 * properties file serves every command, so a key is known when any component reads it.
 *
 * <p>An unknown key is refused, with the nearest known key by edit distance, when it was written for Sluice: given in
 * the file or with {@code -D}, or an environment variable in Sluice's namespace (its first segment is the first segment
 * of a known key, e.g. {@code SLUICE_BUDGET_...}). Unlike Kafka, which only WARNs ("supplied but isn't a known config")
 * because its config map is shared with plugins that may read any key, Sluice hands nothing but {@code kafka.*} on to
 * other code: a key no component reads has no effect at all, and a typo would silently run with the default. An
 * environment variable outside the namespace (e.g. {@code SLUICE_TESTKIT_HIDE}, read by the test kit) only gets a
 * WARN: the environment is shared with wrappers and tools that may use the prefix for their own settings.
 *
 * <p>Stateless; the key lists are computed per call (once per command start).
 */
public final class UnknownKeys {
    /** Where a key came from, for the error. */
    public enum Source { FILE, OVERRIDE, ENVIRONMENT }

    private UnknownKeys() {
    }

    /** The README section that says how keys are given, which families exist and where each key is defined. */
    static final String README_SECTION = "Run against real Kafka, a schema registry and Redis";
    /** The end of an unknown-key error: where a user finds the keys (checked to exist by UnknownKeysTest). */
    static final String WHERE_KEYS_ARE = "the keys are described in README.md, section '" + README_SECTION
            + "', and by topic in docs/operations.md";

    /** Whether any Sluice component reads {@code key} (as a defined key or as a member of a family). */
    public static boolean isKnown(String key) {
        return ConfigKeys.isKnown("topology", key) || ConfigKeys.isKnown("sender", key);
    }

    /**
     * Refuses the first unknown key written for Sluice; WARNs (through {@code warn}) about environment variables
     * outside Sluice's namespace.
     *
     * @param source where a key came from
     * @throws ConfigException naming the key, where it came from and the nearest known key
     */
    public static void check(Collection<String> keys, java.util.function.Function<String, Source> source, String fileName,
                             Consumer<String> warn) {
        Set<String> namespaces = namespaces();
        for (String key : new TreeSet<>(keys)) {
            if (isKnown(key)) {
                continue;
            }
            Source from = source.apply(key);
            String where = switch (from) {
                case FILE -> "in " + fileName;
                case OVERRIDE -> "given with -D";
                case ENVIRONMENT -> "from the environment variable " + Settings.envName(key);
            };
            if (from == Source.ENVIRONMENT && !namespaces.contains(firstSegment(key))) {
                warn.accept("config '" + key + "' (" + where + ") is not read by any Sluice component; ignored");
                continue;
            }
            throw new ConfigException(key, "unknown config '" + key + "' (" + where + ")" + hint(key)
                    + "; " + WHERE_KEYS_ARE);
        }
    }

    /** ": did you mean 'x'?" with the nearest known key, or a Kafka property's pass-through form; empty when none is near. */
    static String hint(String key) {
        if (kafkaConfigNames().contains(key)) {
            return ": Kafka client properties take the prefix kafka., did you mean '" + SenderKeys.KAFKA_PREFIX + key + "'?";
        }
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : candidates(key)) {
            int d = distance(key, candidate);
            if (d < bestDistance) {
                best = candidate;
                bestDistance = d;
            }
        }
        // beyond a third of the key's length the "nearest" key is a guess, not a typo
        return best != null && bestDistance <= Math.max(2, key.length() / 3) ? ": did you mean '" + best + "'?" : "";
    }

    /** The known keys, and each family's template filled in with the segments of {@code key} (bot.<id>.token ...). */
    static List<String> candidates(String key) {
        List<String> out = new ArrayList<>(ConfigKeys.topology());
        out.addAll(ConfigKeys.sender());
        String[] segments = key.split("\\.", -1);
        if (segments.length > 2 && key.startsWith(HttpProviderConfig.PREFIX)) { // provider.<id>.<key>
            HttpProviderConfig.KEYS.forEach(k -> out.add(HttpProviderConfig.PREFIX + segments[1] + "." + k));
        }
        for (ConfigFamily f : SenderKeys.ALL.families()) {
            if (f == HttpProviderConfig.FAMILY) {
                continue;
            }
            String[] t = f.template().split("\\.", -1);
            if (f.template().endsWith("*")) { // prefix family: the rest of the key after the prefix's segments
                String prefix = f.template().substring(0, f.template().length() - 1);
                int n = prefix.split("\\.").length;
                if (segments.length > n) {
                    out.add(prefix + String.join(".", List.of(segments).subList(n, segments.length)));
                }
                continue;
            }
            if (t.length != segments.length) {
                continue;
            }
            StringBuilder filled = new StringBuilder();
            for (int i = 0; i < t.length; i++) {
                filled.append(i == 0 ? "" : ".").append(t[i].startsWith("<") ? segments[i] : t[i]);
            }
            out.add(filled.toString());
        }
        return out;
    }

    /** First segments of every known key and family: budget, sender, redis, bot, provider, kafka, topic, ... */
    static Set<String> namespaces() {
        Set<String> out = new TreeSet<>();
        ConfigKeys.topology().forEach(k -> out.add(firstSegment(k)));
        ConfigKeys.sender().forEach(k -> out.add(firstSegment(k)));
        SenderKeys.ALL.families().forEach(f -> out.add(firstSegment(f.template())));
        return out;
    }

    private static String firstSegment(String key) {
        int dot = key.indexOf('.');
        return dot < 0 ? key : key.substring(0, dot);
    }

    private static Set<String> kafkaConfigNames() {
        Set<String> names = new TreeSet<>(ProducerConfig.configNames());
        names.addAll(ConsumerConfig.configNames());
        names.addAll(AdminClientConfig.configNames());
        names.addAll(StreamsConfig.configDef().names());
        return names;
    }

    /** Levenshtein distance. */
    static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                cur[j] = Math.min(sub, Math.min(prev[j] + 1, cur[j - 1] + 1));
            }
            int[] swap = prev;
            prev = cur;
            cur = swap;
        }
        return prev[b.length()];
    }
}
