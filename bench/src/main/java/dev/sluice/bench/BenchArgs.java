package dev.sluice.bench;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The options of one scenario: {@code --name value} pairs and {@code --flag}s. Every scenario accepts
 * {@code --json FILE} and {@code --scale X} (a factor on the full sizes; 1 is the default).
 */
public final class BenchArgs {
    private final Map<String, String> values;

    private BenchArgs(Map<String, String> values) {
        this.values = values;
    }

    /** @throws IllegalArgumentException for a token that is not {@code --name} */
    public static BenchArgs parse(String[] args) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--") || a.length() == 2) {
                throw new IllegalArgumentException("expected --option, got '" + a + "'");
            }
            String name = a.substring(2);
            int eq = name.indexOf('=');
            if (eq > 0) {
                m.put(name.substring(0, eq), name.substring(eq + 1));
            } else if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
                m.put(name, args[++i]);
            } else {
                m.put(name, "true");
            }
        }
        return new BenchArgs(m);
    }

    public Optional<Path> json() {
        return Optional.ofNullable(values.get("json")).map(Path::of);
    }

    /** The factor on the full sizes, {@code --scale}, default 1; must be in (0, 10]. */
    public double scale() {
        double s = dbl("scale", 1.0);
        if (!(s > 0 && s <= 10)) {
            throw new IllegalArgumentException("--scale: must be in (0, 10], was " + s);
        }
        return s;
    }

    public double dbl(String name, double defaultValue) {
        String v = values.get(name);
        try {
            return v == null ? defaultValue : Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + ": not a number: '" + v + "'");
        }
    }

    public int integer(String name, int defaultValue) {
        String v = values.get(name);
        try {
            return v == null ? defaultValue : Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + ": not an integer: '" + v + "'");
        }
    }

    /** A size of the issue scaled by {@code --scale}, at least {@code min}; {@code --name} wins when given. */
    public int scaled(String name, int full, int min) {
        return values.containsKey(name) ? integer(name, full) : Math.max(min, (int) Math.round(full * scale()));
    }

    public boolean flag(String name) {
        return Boolean.parseBoolean(values.getOrDefault(name, "false"));
    }

    public String string(String name, String defaultValue) {
        return values.getOrDefault(name, defaultValue);
    }

    /**
     * {@code --topology-settings k=v,k=v}: topology config keys laid over a scenario's own (issue 21: A/B runs of one
     * jar, e.g. {@code critical.commit.interval.ms=0} or {@code kafka.producer.retry.backoff.ms=20}); empty when absent.
     */
    public Map<String, String> topologySettings() {
        Map<String, String> m = new LinkedHashMap<>();
        String v = values.get("topology-settings");
        if (v == null || v.isBlank()) {
            return m;
        }
        for (String pair : v.split(",")) {
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--topology-settings: expected key=value, got '" + pair + "'");
            }
            m.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
        }
        return m;
    }
}
