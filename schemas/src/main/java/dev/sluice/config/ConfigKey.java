package dev.sluice.config;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * One config key defined once, in the style of Kafka's {@code ConfigDef.define}: its name, default, rule and
 * documentation, and how a raw value is parsed. A config class reads its values through its keys
 * ({@link #read}), checks values given to its builder with the same rule ({@link #check}), and the list of keys a
 * process accepts (deploy files, environment) is derived from the definitions ({@link ConfigKeySet}).
 *
 * <p>Why not Kafka's {@code ConfigDef} itself: it parses a whole map at once with its own messages (values echoed,
 * no environment name, booleans only {@code true}/{@code false}); Sluice's errors name the key, its environment
 * variable and the value, redacted for secrets ({@link Settings#invalid}).
 *
 * <p>Immutable and thread-safe.
 *
 * @param <T> the value's type
 */
public final class ConfigKey<T> {
    /** Turns a raw (non-blank) value into a {@code T}; throws {@link Settings#invalid} when it cannot. */
    @FunctionalInterface
    public interface Parser<T> {
        T parse(String key, String raw);
    }

    private final String name;
    private final T defaultValue;
    private final Parser<T> parser;
    private final Predicate<? super T> valid;
    private final String rule;
    private final String doc;

    private ConfigKey(String name, T defaultValue, Parser<T> parser, Predicate<? super T> valid, String rule, String doc) {
        this.name = Objects.requireNonNull(name, "name");
        this.defaultValue = defaultValue;
        this.parser = Objects.requireNonNull(parser, "parser");
        this.valid = Objects.requireNonNull(valid, "valid");
        this.rule = Objects.requireNonNull(rule, "rule");
        this.doc = Objects.requireNonNull(doc, "doc");
    }

    /** A key of any type. {@code defaultValue} may be null (no default: the key is optional or required). */
    public static <T> ConfigKey<T> define(String name, T defaultValue, Parser<T> parser, Predicate<? super T> valid,
                                          String rule, String doc) {
        return new ConfigKey<>(name, defaultValue, parser, valid, rule, doc);
    }

    /** A finite decimal number. */
    public static ConfigKey<Double> number(String name, Double defaultValue, Predicate<Double> valid, String rule,
                                           String doc) {
        return define(name, defaultValue, (k, raw) -> {
            try {
                double v = Double.parseDouble(raw.trim());
                if (!Double.isFinite(v)) {
                    throw Settings.invalid(k, raw, rule);
                }
                return v;
            } catch (NumberFormatException e) {
                throw Settings.invalid(k, raw, rule);
            }
        }, valid, rule, doc);
    }

    /** A number &gt; 0. */
    public static ConfigKey<Double> positiveNumber(String name, double defaultValue, String doc) {
        return number(name, defaultValue, v -> v > 0, "a positive number", doc);
    }

    /** A whole number (a {@code long}). */
    public static ConfigKey<Long> integer(String name, Long defaultValue, Predicate<Long> valid, String rule, String doc) {
        return define(name, defaultValue, (k, raw) -> {
            try {
                return Long.parseLong(raw.trim());
            } catch (NumberFormatException e) {
                throw Settings.invalid(k, raw, "an integer");
            }
        }, valid, rule, doc);
    }

    /** A whole number from 1 to {@link Integer#MAX_VALUE}. */
    public static ConfigKey<Long> positiveInt(String name, long defaultValue, String doc) {
        return integer(name, defaultValue, v -> v > 0 && v <= Integer.MAX_VALUE, "a positive integer", doc);
    }

    /** A whole number of milliseconds. */
    public static ConfigKey<Duration> millis(String name, Duration defaultValue, Predicate<Duration> valid, String rule,
                                             String doc) {
        return define(name, defaultValue, (k, raw) -> {
            try {
                return Duration.ofMillis(Long.parseLong(raw.trim()));
            } catch (NumberFormatException e) {
                throw Settings.invalid(k, raw, "an integer");
            }
        }, valid, rule, doc);
    }

    /** A positive whole number of milliseconds; the name ends in {@code .ms}. */
    public static ConfigKey<Duration> positiveMillis(String name, long defaultMs, String doc) {
        return millis(name, Duration.ofMillis(defaultMs), d -> d.toMillis() > 0, "a positive integer", doc);
    }

    /** {@code true}/{@code yes}/{@code 1} or {@code false}/{@code no}/{@code 0}. */
    public static ConfigKey<Boolean> bool(String name, boolean defaultValue, String doc) {
        return define(name, defaultValue, (k, raw) -> switch (raw.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "true", "yes", "1" -> true;
            case "false", "no", "0" -> false;
            default -> throw Settings.invalid(k, raw, "true or false");
        }, v -> true, "true or false", doc);
    }

    /** Text as given. */
    public static ConfigKey<String> string(String name, String defaultValue, Predicate<String> valid, String rule,
                                           String doc) {
        return define(name, defaultValue, (k, raw) -> raw, valid, rule, doc);
    }

    /** Any non-blank text. */
    public static ConfigKey<String> string(String name, String defaultValue, String doc) {
        return string(name, defaultValue, v -> true, "text", doc);
    }

    /** One of an enum's constants, written in lower case with dashes ({@code local-fallback}). */
    public static <E extends Enum<E>> ConfigKey<E> oneOf(String name, Class<E> type, E defaultValue, String doc) {
        StringBuilder allowed = new StringBuilder();
        for (E c : type.getEnumConstants()) {
            allowed.append(allowed.length() == 0 ? "" : ", ").append(c.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));
        }
        String rule = "one of " + allowed;
        return define(name, defaultValue, (k, raw) -> {
            String norm = raw.trim().toUpperCase(java.util.Locale.ROOT).replace('-', '_');
            for (E c : type.getEnumConstants()) {
                if (c.name().equals(norm)) {
                    return c;
                }
            }
            throw Settings.invalid(k, raw, rule);
        }, v -> true, rule, doc);
    }

    /** The value set for this key, checked; the default when it is not set (blank counts as not set). */
    public T read(Settings s) {
        String raw = s.asMap().get(name);
        if (raw == null || raw.isBlank()) {
            return defaultValue;
        }
        T value = parser.parse(name, raw);
        if (!valid.test(value)) {
            throw Settings.invalid(name, raw, rule);
        }
        return value;
    }

    /** As {@link #read}, but a missing value is an error naming the key and its environment variable. */
    public T require(Settings s) {
        s.required(name);
        return read(s);
    }

    /** {@code value} when it follows the rule (values given to a builder); else the error {@link #read} gives. */
    public T check(T value) {
        if (value == null || !valid.test(value)) {
            throw Settings.invalid(name, value instanceof Duration d ? Long.toString(d.toMillis()) : String.valueOf(value),
                    rule);
        }
        return value;
    }

    public String name() {
        return name;
    }

    /** The default, or null when the key has none. */
    public T defaultValue() {
        return defaultValue;
    }

    /** What a valid value is, as error messages say it ({@code "0 <= h < 1"}). */
    public String rule() {
        return rule;
    }

    public String doc() {
        return doc;
    }

    /** {@link Settings#envName} of this key. */
    public String envName() {
        return Settings.envName(name);
    }

    @Override
    public String toString() {
        return name + " (default " + defaultValue + "; " + rule + ")";
    }
}
