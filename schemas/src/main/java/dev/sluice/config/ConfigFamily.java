package dev.sluice.config;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * An open-ended family of config keys, such as {@code bot.<id>.token} or {@code kafka.<property>}: the keys a
 * process accepts beyond its {@link ConfigKey}s. The config class that reads a family defines it, with its doc.
 *
 * @param template the keys' shape as documented, e.g. {@code bot.<id>.token}
 * @param pattern  the keys of the family, matched whole
 * @param doc      what the keys do
 */
public record ConfigFamily(String template, Pattern pattern, String doc) {
    public ConfigFamily {
        Objects.requireNonNull(template, "template");
        Objects.requireNonNull(pattern, "pattern");
        Objects.requireNonNull(doc, "doc");
    }

    /** A family whose keys are {@code prefix} + an id matching {@code idPattern} + {@code suffix}. */
    public static ConfigFamily perId(String prefix, String idPattern, String suffix, String doc) {
        return new ConfigFamily(prefix + "<id>" + suffix,
                Pattern.compile(Pattern.quote(prefix) + "(?:" + idPattern + ")" + Pattern.quote(suffix)), doc);
    }

    /** A family of every key that starts with {@code prefix} and has something after it ({@code kafka.*}). */
    public static ConfigFamily prefix(String prefix, String doc) {
        return new ConfigFamily(prefix + "*", Pattern.compile(Pattern.quote(prefix) + ".+"), doc);
    }

    public boolean matches(String key) {
        return pattern.matcher(key).matches();
    }
}
