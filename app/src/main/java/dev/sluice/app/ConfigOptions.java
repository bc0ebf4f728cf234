package dev.sluice.app;

import dev.sluice.config.Settings;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Option;

/**
 * {@code --config FILE} (Kafka-style properties) and {@code -D key=value}, overlaid by {@code SLUICE_*} env. Every
 * command that reads config loads it here, so the unknown-key check ({@link UnknownKeys}) runs in this one place.
 */
public final class ConfigOptions {
    @Option(names = {"-c", "--config"}, paramLabel = "FILE", description = "Properties file (Kafka-style keys, e.g. bootstrap.servers).")
    Path configFile;

    @Option(names = "-D", paramLabel = "KEY=VALUE", description = "Set a config key (wins over the file and the environment).")
    Map<String, String> overrides = new LinkedHashMap<>();

    /** The settings; an unknown key written for Sluice stops the command with a {@link dev.sluice.config.ConfigException}. */
    public Settings load() {
        return load(System.getenv());
    }

    Settings load(Map<String, String> env) {
        Set<String> fromFile = Settings.load(configFile, Map.of()).asMap().keySet();
        Set<String> defined = new java.util.TreeSet<>(ConfigKeys.topology()); // SLUICE_* reaches each, dashes or not
        defined.addAll(ConfigKeys.sender());
        Settings s = Settings.load(configFile, env, defined);
        for (Map.Entry<String, String> e : overrides.entrySet()) {
            s = s.with(e.getKey(), e.getValue());
        }
        UnknownKeys.check(s.asMap().keySet(), key -> overrides.containsKey(key) ? UnknownKeys.Source.OVERRIDE
                        : fromFile.contains(key) ? UnknownKeys.Source.FILE : UnknownKeys.Source.ENVIRONMENT,
                String.valueOf(configFile), w -> LoggerFactory.getLogger(ConfigOptions.class).warn(w));
        Map<String, String> where = new java.util.TreeMap<>();
        for (String key : s.asMap().keySet()) {
            // precedence as loaded: -D over a SLUICE_* variable over the file
            where.put(key, overrides.containsKey(key) ? "given with -D"
                    : env.containsKey(Settings.envName(key)) || !fromFile.contains(key)
                    ? "from the environment variable " + Settings.envName(key) : "in " + configFile);
        }
        ConfigOrigins.remember(where);
        return s;
    }

    /** The -D keys, in order given (sluice dev hands each to the components that read it). */
    public Map<String, String> overrides() {
        return overrides;
    }
}
