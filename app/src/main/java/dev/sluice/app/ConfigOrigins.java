package dev.sluice.app;

import dev.sluice.config.ConfigException;
import dev.sluice.config.Settings;
import java.util.Map;

/**
 * Where each key of the last loaded configuration came from ({@code -D}, the {@code --config} file or a
 * {@code SLUICE_*} variable), so that an invalid-value error, which the config classes word as
 * {@code (env SLUICE_KEY)}, names the place the value really came from. One CLI command runs per process and loads
 * its configuration once ({@link ConfigOptions#load}), before anything can fail on a value; hence one process-wide
 * map, replaced by each load.
 */
public final class ConfigOrigins {
    private static volatile Map<String, String> whereByKey = Map.of();

    private ConfigOrigins() {
    }

    /** Records, for each key, "given with -D", "in FILE" or "from the environment variable SLUICE_...". */
    static void remember(Map<String, String> where) {
        whereByKey = Map.copyOf(where);
    }

    /** Where {@code key} came from, or null when it was not loaded (a default, or a value derived from others). */
    static String of(String key) {
        return whereByKey.get(key);
    }

    /**
     * The exception's message with {@code (env SLUICE_KEY)} replaced by where the key's value came from, when that
     * was the file or {@code -D}; else the message as it is.
     */
    public static String message(ConfigException e) {
        String m = e.getMessage();
        String key = e.key();
        String where = key == null ? null : whereByKey.get(key);
        String envText = key == null ? null : "(env " + Settings.envName(key) + ")";
        if (m == null || where == null || where.startsWith("from the environment") || !m.contains(envText)) {
            return m;
        }
        return m.replace(envText, "(" + where + ")");
    }
}
