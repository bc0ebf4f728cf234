package dev.sluice.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The keys a config class (or a whole process) reads: its {@link ConfigKey}s and {@link ConfigFamily}s, in
 * definition order. The list of keys a deploy file or the environment may set is derived from here, never kept
 * by hand. Immutable and thread-safe.
 */
public final class ConfigKeySet {
    private final Map<String, ConfigKey<?>> keys;
    private final List<ConfigFamily> families;

    private ConfigKeySet(Map<String, ConfigKey<?>> keys, List<ConfigFamily> families) {
        this.keys = Collections.unmodifiableMap(keys);
        this.families = List.copyOf(families);
    }

    /**
     * @throws IllegalArgumentException if two definitions share a name (a key is defined once)
     */
    public static ConfigKeySet of(List<? extends ConfigKey<?>> keys, List<ConfigFamily> families) {
        Map<String, ConfigKey<?>> byName = new LinkedHashMap<>();
        for (ConfigKey<?> k : keys) {
            add(byName, k);
        }
        return new ConfigKeySet(byName, families);
    }

    public static ConfigKeySet of(ConfigKey<?>... keys) {
        return of(List.of(keys), List.of());
    }

    private static void add(Map<String, ConfigKey<?>> byName, ConfigKey<?> k) {
        ConfigKey<?> before = byName.putIfAbsent(k.name(), k);
        if (before != null && before != k) {
            throw new IllegalArgumentException("config key '" + k.name() + "' is defined twice");
        }
    }

    /** The keys and families of both; one definition may appear in both (shared keys), two of one name may not. */
    public ConfigKeySet plus(ConfigKeySet other) {
        Map<String, ConfigKey<?>> byName = new LinkedHashMap<>(keys);
        other.keys.values().forEach(k -> add(byName, k));
        List<ConfigFamily> all = new ArrayList<>(families);
        other.families.stream().filter(f -> !all.contains(f)).forEach(all::add);
        return new ConfigKeySet(byName, all);
    }

    /** This set with more families. */
    public ConfigKeySet plus(ConfigFamily... more) {
        List<ConfigFamily> all = new ArrayList<>(families);
        all.addAll(List.of(more));
        return new ConfigKeySet(new LinkedHashMap<>(keys), all);
    }

    /** Every defined key's name, in definition order. */
    public Set<String> names() {
        return keys.keySet();
    }

    public List<ConfigKey<?>> keys() {
        return List.copyOf(keys.values());
    }

    public List<ConfigFamily> families() {
        return families;
    }

    public Optional<ConfigKey<?>> key(String name) {
        return Optional.ofNullable(keys.get(name));
    }

    /** Whether {@code key} is one of the defined keys or belongs to one of the families. */
    public boolean accepts(String key) {
        return keys.containsKey(key) || families.stream().anyMatch(f -> f.matches(key));
    }
}
