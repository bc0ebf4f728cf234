package dev.sluice.app;

import dev.sluice.config.Settings;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Option;

/** {@code --config FILE} (Kafka-style properties) and {@code -D key=value}, overlaid by {@code SLUICE_*} env. */
public final class ConfigOptions {
    @Option(names = {"-c", "--config"}, paramLabel = "FILE", description = "Properties file (Kafka-style keys, e.g. bootstrap.servers).")
    Path configFile;

    @Option(names = "-D", paramLabel = "KEY=VALUE", description = "Set a config key (wins over the file and the environment).")
    Map<String, String> overrides = new LinkedHashMap<>();

    public Settings load() {
        Settings s = Settings.load(configFile, System.getenv());
        for (Map.Entry<String, String> e : overrides.entrySet()) {
            s = s.with(e.getKey(), e.getValue());
        }
        return s;
    }
}
