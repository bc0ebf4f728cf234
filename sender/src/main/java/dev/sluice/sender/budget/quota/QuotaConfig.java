package dev.sluice.sender.budget.quota;

import dev.sluice.config.Settings;
import dev.sluice.sender.budget.BudgetKeys;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Contractual quotas kept in PostgreSQL ({@link PostgresQuota}). Immutable; built from {@link Settings} and
 * validated (a {@code ConfigException} names the key and the value; the password is never printed).
 *
 * <table>
 * <caption>Keys</caption>
 * <tr><td>{@code quota.jdbc.url}</td><td>required for quota mode, e.g.
 *     {@code jdbc:postgresql://db:5432/sluice}</td></tr>
 * <tr><td>{@code quota.jdbc.user}, {@code quota.jdbc.password}</td><td>credentials (secret; also accepted in
 *     the URL)</td></tr>
 * <tr><td>{@code quota.<key>.limit}</td><td>the contractual number of requests of budget key {@code <key>} per
 *     window, &ge; 1; a key without one has no quota</td></tr>
 * <tr><td>{@code quota.<key>.window.ms}</td><td>that key's window, default {@code quota.window.ms}</td></tr>
 * <tr><td>{@code quota.window.ms}</td><td>default window, 86400000 (one day). Windows are fixed, aligned to the
 *     epoch in PostgreSQL server time (a day runs from 00:00 UTC)</td></tr>
 * <tr><td>{@code quota.lease.size}</td><td>units a process takes from PostgreSQL per round trip and hands out
 *     locally, default 10; 1 = one round trip per request. Units a process dies holding are lost for that
 *     window (counted as used), never granted twice</td></tr>
 * <tr><td>{@code quota.table}</td><td>table name, default {@code sluice_quota} (created if missing)</td></tr>
 * <tr><td>{@code quota.timeout.ms}</td><td>connect and socket timeout of PostgreSQL calls, default 2000 (whole
 *     seconds for the driver, rounded up)</td></tr>
 * <tr><td>{@code quota.probe.interval.ms}</td><td>after a PostgreSQL error, refuse ({@code UNAVAILABLE}) this
 *     long before trying again, default 1000</td></tr>
 * </table>
 */
public final class QuotaConfig {
    public static final String JDBC_URL = "quota.jdbc.url";
    public static final String JDBC_USER = "quota.jdbc.user";
    public static final String JDBC_PASSWORD = "quota.jdbc.password";
    public static final String WINDOW_MS = "quota.window.ms";
    public static final String LEASE_SIZE = "quota.lease.size";
    public static final String TABLE = "quota.table";
    public static final String TIMEOUT_MS = "quota.timeout.ms";
    public static final String PROBE_INTERVAL_MS = "quota.probe.interval.ms";
    static final String LIMIT_SUFFIX = ".limit";
    static final String WINDOW_SUFFIX = ".window.ms";
    private static final Pattern TABLE_NAME = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

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
        if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:postgresql:")) {
            throw Settings.invalid(JDBC_URL, String.valueOf(jdbcUrl), "a jdbc:postgresql:// URL");
        }
        check(leaseSize >= 1, LEASE_SIZE, leaseSize, "an integer >= 1");
        check(TABLE_NAME.matcher(table).matches(), TABLE, table, "a lower-case SQL identifier");
        check(timeout.toMillis() >= 1, TIMEOUT_MS, timeout.toMillis(), "a positive number of milliseconds");
        check(probeInterval.toMillis() >= 1, PROBE_INTERVAL_MS, probeInterval.toMillis(), "a positive number of milliseconds");
    }

    private static void check(boolean ok, String key, Object value, String rule) {
        if (!ok) {
            throw Settings.invalid(key, String.valueOf(value), rule);
        }
    }

    /** Reads the keys of the class comment; {@code quota.jdbc.url} is required. */
    public static QuotaConfig from(Settings s) {
        Builder b = builder(s.required(JDBC_URL))
                .credentials(s.string(JDBC_USER, null), s.string(JDBC_PASSWORD, null))
                .leaseSize(s.positiveInt(LEASE_SIZE, 10))
                .table(s.string(TABLE, "sluice_quota"))
                .timeout(Duration.ofMillis(s.positiveLong(TIMEOUT_MS, 2000)))
                .probeInterval(Duration.ofMillis(s.positiveLong(PROBE_INTERVAL_MS, 1000)));
        Duration defaultWindow = Duration.ofMillis(s.positiveLong(WINDOW_MS, 86_400_000L));
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
        private int leaseSize = 10;
        private String table = "sluice_quota";
        private Duration timeout = Duration.ofSeconds(2);
        private Duration probeInterval = Duration.ofSeconds(1);

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
