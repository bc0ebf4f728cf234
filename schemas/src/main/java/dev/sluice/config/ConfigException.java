package dev.sluice.config;

/**
 * A configuration value is missing or invalid. The message always names the key and the offending
 * value (values of keys that look secret are redacted), so an operator can fix it without a debugger.
 */
public final class ConfigException extends IllegalArgumentException {
    private final String key;

    public ConfigException(String key, String message) {
        super(message);
        this.key = key;
    }

    /** The configuration key at fault, Kafka style (e.g. {@code digest.flush.interval.ms}). */
    public String key() {
        return key;
    }
}
