package dev.sluice.config;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * Immutable view of Kafka-style properties ({@code digest.flush.interval.ms}) with environment
 * overrides: {@code SLUICE_DIGEST_FLUSH_INTERVAL_MS} overrides {@code digest.flush.interval.ms}
 * (upper case, dots and dashes become underscores, prefix {@code SLUICE_}: {@link #envName}).
 *
 * <p>Environment variables ({@link #withEnvironment(Map, Collection)}): a variable sets the key whose env form it is,
 * among the keys already given (file, {@code -D}) and the keys the process defines, so a key with a dash is reached
 * too ({@code SLUICE_A_RETRY_AFTER_MS} sets {@code a.retry-after.ms}); a variable two such keys share is refused. A
 * variable no such key matches becomes the lower-case dotted key ({@code SLUICE_BOT_ALERTS_TOKEN} sets
 * {@code bot.alerts.token}, a member of a family), which the caller checks like any key (app's {@code UnknownKeys}:
 * refused when in Sluice's namespace). A family member whose id has a dash or an underscore ({@code bot.<id>.token}
 * with the id {@code alerts-v2}) cannot be told apart in a variable name: give it in the file or with {@code -D}, or
 * name it there (any value) and the variable then overrides it.
 *
 * <p>Typed getters validate and fail with a {@link ConfigException} naming the key and the value.
 * Config classes (e.g. {@code SenderConfig}) read their fields from here once, at start, and are
 * immutable afterwards.
 */
public final class Settings {
    private static final String ENV_PREFIX = "SLUICE_";
    private final Map<String, String> values;

    private Settings(Map<String, String> values) {
        this.values = Collections.unmodifiableMap(new TreeMap<>(values));
        // Whatever secret this process is given is removed from its logs and error output from now on.
        this.values.forEach(SecretRedaction::rememberEntry);
    }

    public static Settings of(Map<String, String> values) {
        return new Settings(values);
    }

    public static Settings empty() {
        return new Settings(Map.of());
    }

    /** Properties file (may be null) overlaid with matching {@code SLUICE_*} environment variables. */
    public static Settings load(Path propertiesFile, Map<String, String> env) {
        return load(propertiesFile, env, Set.of());
    }

    /**
     * As {@link #load(Path, Map)}, the variables matched against {@code definedKeys} too
     * ({@link #withEnvironment(Map, Collection)}).
     */
    public static Settings load(Path propertiesFile, Map<String, String> env, Collection<String> definedKeys) {
        Map<String, String> merged = new LinkedHashMap<>();
        if (propertiesFile != null) {
            Properties p = new Properties();
            try (Reader r = Files.newBufferedReader(propertiesFile)) {
                p.load(r);
            } catch (IOException e) {
                throw new ConfigException("config", "cannot read config file " + propertiesFile + ": " + e.getMessage());
            }
            p.stringPropertyNames().forEach(k -> merged.put(k, p.getProperty(k).trim()));
        }
        return of(merged).withEnvironment(env, definedKeys);
    }

    /** {@link #withEnvironment(Map, Collection)} matching only the keys already given. */
    public Settings withEnvironment(Map<String, String> env) {
        return withEnvironment(env, Set.of());
    }

    /**
     * Overlays environment variables. A variable {@code SLUICE_A_B_C} sets the key whose {@link #envName} it is, among
     * the keys given here and {@code definedKeys}; when none matches, the lower-case dotted key {@code a.b.c}.
     *
     * @param definedKeys the keys the process reads (may contain dashes)
     * @throws ConfigException when two of those keys have the variable's name as their env form
     */
    public Settings withEnvironment(Map<String, String> env, Collection<String> definedKeys) {
        Set<String> candidates = new TreeSet<>(definedKeys);
        candidates.addAll(values.keySet());
        Map<String, List<String>> byEnvName = new TreeMap<>();
        candidates.forEach(k -> byEnvName.computeIfAbsent(envName(k), n -> new ArrayList<>()).add(k));
        Map<String, String> merged = new LinkedHashMap<>(values);
        for (Map.Entry<String, String> e : new TreeMap<>(env).entrySet()) {
            String name = e.getKey();
            if (!name.startsWith(ENV_PREFIX) || name.length() == ENV_PREFIX.length()) {
                continue;
            }
            List<String> matches = byEnvName.getOrDefault(name, List.of());
            if (matches.size() > 1) {
                throw new ConfigException("config", "environment variable " + name + " could set '"
                        + String.join("' or '", matches) + "'; set the key in --config FILE or with -D");
            }
            merged.put(matches.isEmpty() ? name.substring(ENV_PREFIX.length()).toLowerCase(Locale.ROOT).replace('_', '.')
                    : matches.get(0), e.getValue().trim());
        }
        return new Settings(merged);
    }

    /** Adds defaults for keys that are not set. */
    public Settings withDefaults(Map<String, String> defaults) {
        Map<String, String> merged = new LinkedHashMap<>(defaults);
        merged.putAll(values);
        return new Settings(merged);
    }

    public Settings with(String key, String value) {
        Map<String, String> merged = new LinkedHashMap<>(values);
        merged.put(key, value);
        return new Settings(merged);
    }

    /** The environment variable that overrides {@code key}. */
    public static String envName(String key) {
        return ENV_PREFIX + key.toUpperCase().replace('.', '_').replace('-', '_');
    }

    public Map<String, String> asMap() {
        return values;
    }

    /** All entries whose key starts with {@code prefix}, with the prefix removed. */
    public Map<String, String> withPrefix(String prefix) {
        Map<String, String> out = new TreeMap<>();
        values.forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                out.put(k.substring(prefix.length()), v);
            }
        });
        return out;
    }

    public boolean has(String key) {
        String v = values.get(key);
        return v != null && !v.isBlank();
    }

    public String string(String key, String defaultValue) {
        String v = values.get(key);
        return v == null || v.isBlank() ? defaultValue : v;
    }

    public String required(String key) {
        String v = values.get(key);
        if (v == null || v.isBlank()) {
            throw new ConfigException(key, "missing required config '" + key + "' (or env " + envName(key) + ")");
        }
        return v;
    }

    public long longValue(String key, long defaultValue, Predicate<Long> valid, String rule) {
        String raw = values.get(key);
        if (raw == null || raw.isBlank()) {
            return defaultValue;
        }
        long v;
        try {
            v = Long.parseLong(raw.trim());
        } catch (NumberFormatException e) {
            throw invalid(key, raw, "an integer");
        }
        if (!valid.test(v)) {
            throw invalid(key, raw, rule);
        }
        return v;
    }

    public long positiveLong(String key, long defaultValue) {
        return longValue(key, defaultValue, v -> v > 0, "a positive integer");
    }

    public long nonNegativeLong(String key, long defaultValue) {
        return longValue(key, defaultValue, v -> v >= 0, "an integer >= 0");
    }

    public int positiveInt(String key, int defaultValue) {
        return Math.toIntExact(longValue(key, defaultValue, v -> v > 0 && v <= Integer.MAX_VALUE, "a positive integer"));
    }

    public double positiveDouble(String key, double defaultValue) {
        String raw = values.get(key);
        if (raw == null || raw.isBlank()) {
            return defaultValue;
        }
        try {
            double v = Double.parseDouble(raw.trim());
            if (!(v > 0) || Double.isInfinite(v)) {
                throw invalid(key, raw, "a positive number");
            }
            return v;
        } catch (NumberFormatException e) {
            throw invalid(key, raw, "a positive number");
        }
    }

    /** A duration in milliseconds; the key should end in {@code .ms}. */
    public Duration millis(String key, Duration defaultValue) {
        return Duration.ofMillis(longValue(key, defaultValue.toMillis(), v -> v >= 0, "a duration in milliseconds >= 0"));
    }

    public boolean bool(String key, boolean defaultValue) {
        String raw = values.get(key);
        if (raw == null || raw.isBlank()) {
            return defaultValue;
        }
        return switch (raw.trim().toLowerCase()) {
            case "true", "yes", "1" -> true;
            case "false", "no", "0" -> false;
            default -> throw invalid(key, raw, "true or false");
        };
    }

    public <E extends Enum<E>> E enumValue(String key, Class<E> type, E defaultValue) {
        String raw = values.get(key);
        if (raw == null || raw.isBlank()) {
            return defaultValue;
        }
        String norm = raw.trim().toUpperCase().replace('-', '_');
        for (E c : type.getEnumConstants()) {
            if (c.name().equals(norm)) {
                return c;
            }
        }
        StringBuilder allowed = new StringBuilder();
        for (E c : type.getEnumConstants()) {
            allowed.append(allowed.length() == 0 ? "" : ", ").append(c.name().toLowerCase().replace('_', '-'));
        }
        throw invalid(key, raw, "one of " + allowed);
    }

    public static ConfigException invalid(String key, String value, String expected) {
        return new ConfigException(key, "invalid value '" + redactIfSecret(key, value) + "' for config '" + key
                + "' (env " + envName(key) + "): expected " + expected);
    }

    /**
     * Keys that hold credentials never echo their value ({@link SecretRedaction#isSecretKey}: tokens,
     * passwords, passphrases, secrets, credentials, user info, private and API keys, JAAS configs, keys
     * ending in {@code .key}); other values lose the user info of any URL in them.
     */
    public static String redactIfSecret(String key, String value) {
        return SecretRedaction.redactValue(key, value);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("Settings{");
        values.forEach((k, v) -> sb.append(k).append('=').append(redactIfSecret(k, v)).append(", "));
        return sb.append('}').toString();
    }
}
