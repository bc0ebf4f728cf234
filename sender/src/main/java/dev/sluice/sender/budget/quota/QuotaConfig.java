package dev.sluice.sender.budget.quota;

import dev.sluice.config.ConfigFamily;
import dev.sluice.config.ConfigKey;
import dev.sluice.config.ConfigKeySet;
import dev.sluice.config.Settings;
import dev.sluice.sender.budget.BudgetKeys;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Contractual quotas kept in PostgreSQL ({@link PostgresQuota}). Immutable; built from {@link Settings} and
 * validated (a {@code ConfigException} names the key and the value; the password is never printed). Every key is
 * defined once below ({@link #KEYS}); quota mode is on when {@link #JDBC_URL} is set ({@link #fromIfSet}).
 */
public final class QuotaConfig {
    private static final Pattern TABLE_NAME = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
    public static final ConfigKey<String> JDBC_URL = ConfigKey.string("quota.jdbc.url", null,
            v -> v.startsWith("jdbc:postgresql:"), "a jdbc:postgresql:// URL",
            "the PostgreSQL of quota mode, e.g. jdbc:postgresql://db:5432/sluice; unset: no quota mode");
    public static final ConfigKey<String> JDBC_USER = ConfigKey.string("quota.jdbc.user", null,
            "PostgreSQL user (also accepted in the URL)");
    public static final ConfigKey<String> JDBC_PASSWORD = ConfigKey.string("quota.jdbc.password", null,
            "PostgreSQL password; secret, never printed (also accepted in the URL)");
    public static final ConfigKey<Duration> WINDOW_MS = ConfigKey.positiveMillis("quota.window.ms", 86_400_000L,
            "default window of quota.<key>.limit (one day). Windows are fixed, aligned to the epoch in PostgreSQL "
                    + "server time (a day runs from 00:00 UTC)");
    public static final ConfigKey<Long> LEASE_SIZE = ConfigKey.integer("quota.lease.size", 10L,
            n -> n >= 1 && n <= Integer.MAX_VALUE, "an integer >= 1", "units a process takes from PostgreSQL per round "
                    + "trip and hands out locally; 1 = one round trip per request. Units a process dies holding are "
                    + "lost for that window (counted as used), never granted twice");
    public static final ConfigKey<String> TABLE = ConfigKey.string("quota.table", "sluice_quota",
            t -> TABLE_NAME.matcher(t).matches(), "a lower-case SQL identifier", "table name (created if missing)");
    public static final ConfigKey<Duration> TIMEOUT_MS = ConfigKey.millis("quota.timeout.ms", Duration.ofSeconds(2),
            d -> d.toMillis() >= 1, "a positive number of milliseconds",
            "connect and socket timeout of PostgreSQL calls (whole seconds for the driver, rounded up)");
    public static final ConfigKey<Duration> PROBE_INTERVAL_MS = ConfigKey.millis("quota.probe.interval.ms",
            Duration.ofSeconds(1), d -> d.toMillis() >= 1, "a positive number of milliseconds",
            "after a PostgreSQL error, refuse (UNAVAILABLE) this long before trying again");
    static final String LIMIT_SUFFIX = ".limit";
    static final String WINDOW_SUFFIX = ".window.ms";
    /** The keys above and the per-key families {@code quota.<key>.limit}, {@code quota.<key>.window.ms}. */
    public static final ConfigKeySet KEYS = ConfigKeySet.of(List.of(JDBC_URL, JDBC_USER, JDBC_PASSWORD, WINDOW_MS,
            LEASE_SIZE, TABLE, TIMEOUT_MS, PROBE_INTERVAL_MS), List.of(
            ConfigFamily.perId("quota.", BudgetKeys.BOT_ID.pattern(), LIMIT_SUFFIX,
                    "the contractual number of requests of budget key <key> per window, >= 1; a key without one has "
                            + "no quota"),
            ConfigFamily.perId("quota.", BudgetKeys.BOT_ID.pattern(), WINDOW_SUFFIX,
                    "that key's window, default quota.window.ms")));

    /**
     * One key's contract.
     *
     * @param limit  requests allowed per window, &ge; 1
     * @param window the fixed window length, &ge; 1 ms
     */
    public record QuotaLimit(long limit, Duration window) {
        public QuotaLimit {
            if (limit < 1) {
                throw new IllegalArgumentException("quota limit must be >= 1, got " + limit);
            }
            if (window == null || window.toMillis() < 1) {
                throw new IllegalArgumentException("quota window must be >= 1 ms, got " + window);
            }
        }
    }

    private final String jdbcUrl;
    private final String user;
    private final String password;
    private final Map<String, QuotaLimit> limits;
    private final int leaseSize;
    private final String table;
    private final Duration timeout;
    private final Duration probeInterval;

    private QuotaConfig(Builder b) {
        this.jdbcUrl = b.jdbcUrl;
        this.user = b.user;
        this.password = b.password;
        this.limits = Collections.unmodifiableMap(new TreeMap<>(b.limits));
        this.leaseSize = b.leaseSize;
        this.table = b.table;
        this.timeout = b.timeout;
        this.probeInterval = b.probeInterval;
        if (jdbcUrl == null) {
            throw Settings.invalid(JDBC_URL.name(), "null", JDBC_URL.rule());
        }
        JDBC_URL.check(jdbcUrl);
        LEASE_SIZE.check((long) leaseSize);
        TABLE.check(table);
        TIMEOUT_MS.check(timeout);
        PROBE_INTERVAL_MS.check(probeInterval);
    }

    /** Quota mode's config when {@code quota.jdbc.url} is set; empty otherwise. */
    public static Optional<QuotaConfig> fromIfSet(Settings s) {
        return s.has(JDBC_URL.name()) ? Optional.of(from(s)) : Optional.empty();
    }

    /** Reads the keys of {@link #KEYS}; {@code quota.jdbc.url} is required. */
    public static QuotaConfig from(Settings s) {
        Builder b = builder(JDBC_URL.require(s))
                .credentials(JDBC_USER.read(s), JDBC_PASSWORD.read(s))
                .leaseSize(Math.toIntExact(LEASE_SIZE.read(s)))
                .table(TABLE.read(s))
                .timeout(TIMEOUT_MS.read(s))
                .probeInterval(PROBE_INTERVAL_MS.read(s));
        Duration defaultWindow = WINDOW_MS.read(s);
        Map<String, String> rest = s.withPrefix("quota.");
        rest.forEach((name, value) -> {
            if (name.endsWith(LIMIT_SUFFIX)) {
                String key = keyOf(name, LIMIT_SUFFIX);
                Duration window = Duration.ofMillis(s.positiveLong("quota." + key + WINDOW_SUFFIX, defaultWindow.toMillis()));
                b.limit(key, s.positiveLong("quota." + name, 1), window);
            } else if (name.endsWith(WINDOW_SUFFIX) && !name.equals("window.ms")
                    && !rest.containsKey(keyOf(name, WINDOW_SUFFIX) + LIMIT_SUFFIX)) {
                throw Settings.invalid("quota." + name, value, "a window for a key that also has quota."
                        + keyOf(name, WINDOW_SUFFIX) + LIMIT_SUFFIX);
            }
        });
        return b.build();
    }

    private static String keyOf(String name, String suffix) {
        String key = name.substring(0, name.length() - suffix.length());
        if (!BudgetKeys.BOT_ID.matcher(key).matches()) {
            throw Settings.invalid("quota." + name, key, "a budget key matching " + BudgetKeys.BOT_ID.pattern());
        }
        return key;
    }

    public static Builder builder(String jdbcUrl) {
        return new Builder(jdbcUrl);
    }

    public String jdbcUrl() {
        return jdbcUrl;
    }

    public Optional<String> user() {
        return Optional.ofNullable(user);
    }

    /** The password, for the driver only. */
    public Optional<String> password() {
        return Optional.ofNullable(password);
    }

    /** The quota of a key, if it has one. */
    public Optional<QuotaLimit> limitFor(String key) {
        return Optional.ofNullable(limits.get(key));
    }

    public Map<String, QuotaLimit> limits() {
        return limits;
    }

    public int leaseSize() {
        return leaseSize;
    }

    public String table() {
        return table;
    }

    public Duration timeout() {
        return timeout;
    }

    public Duration probeInterval() {
        return probeInterval;
    }

    @Override
    public String toString() {
        return "QuotaConfig{" + jdbcUrl.replaceAll("(?i)password=[^&]*", "password=[redacted]") + ", user=" + user
                + (password != null ? ", password=[redacted]" : "") + ", limits=" + limits + ", lease=" + leaseSize
                + ", table=" + table + "}";
    }

    /** Builder for tests and tools; {@link #build()} validates like {@link #from(Settings)}. */
    public static final class Builder {
        private final String jdbcUrl;
        private String user;
        private String password;
        private final Map<String, QuotaLimit> limits = new TreeMap<>();
        private int leaseSize = Math.toIntExact(LEASE_SIZE.defaultValue());
        private String table = TABLE.defaultValue();
        private Duration timeout = TIMEOUT_MS.defaultValue();
        private Duration probeInterval = PROBE_INTERVAL_MS.defaultValue();

        private Builder(String jdbcUrl) {
            this.jdbcUrl = jdbcUrl;
        }

        public Builder credentials(String user, String password) {
            this.user = user;
            this.password = password;
            return this;
        }

        public Builder limit(String key, long limit, Duration window) {
            BudgetKeys.tag(key);
            limits.put(key, new QuotaLimit(limit, window));
            return this;
        }

        public Builder leaseSize(int n) {
            this.leaseSize = n;
            return this;
        }

        public Builder table(String table) {
            this.table = Objects.requireNonNull(table, "table");
            return this;
        }

        public Builder timeout(Duration d) {
            this.timeout = Objects.requireNonNull(d, "timeout");
            return this;
        }

        public Builder probeInterval(Duration d) {
            this.probeInterval = Objects.requireNonNull(d, "probeInterval");
            return this;
        }

        public QuotaConfig build() {
            return new QuotaConfig(this);
        }
    }
}
