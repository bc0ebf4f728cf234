package dev.sluice.sender.budget.quota;

import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.Limit;
import dev.sluice.sender.budget.quota.QuotaConfig.QuotaLimit;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A contractual quota per budget key and fixed window, with PostgreSQL as the source of truth: every unit
 * handed out was first counted in one row per (key, window) by one atomic statement that refuses to pass
 * the quota,
 *
 * <pre>
 * INSERT INTO sluice_quota AS q (quota_key, window_id, window_ms, quota, used) VALUES (k, w, ms, Q, n)
 * ON CONFLICT (quota_key, window_id) DO UPDATE SET used = q.used + n
 *   WHERE q.used + n &lt;= LEAST(q.quota, Q) AND q.window_ms = ms
 * RETURNING q.used
 * </pre>
 *
 * with the window id {@code w = ⌊now_ms / window_ms⌋} taken from PostgreSQL's clock in the same statement
 * (the table also has {@code CHECK (used <= quota)}). So however many processes and threads ask, and
 * whatever happens to Redis, the units granted in a window never exceed its quota.
 *
 * <p><b>Leases.</b> To cut round trips a process counts {@code quota.lease.size} units at once and hands them
 * out locally; near the end of the quota it asks for exactly what is left. A lease belongs to its window and
 * is dropped when the window ends (its end measured conservatively from the moment the request was sent, so
 * a unit is never spent in the next window). Units of a process that dies are lost for that window, never
 * granted twice; {@link #close()} gives unused ones back.
 *
 * <p><b>Fail-closed.</b> PostgreSQL unreachable or failing: units already leased are still handed out (they
 * are counted); otherwise the request is refused with {@link Limit#UNAVAILABLE} and a wait of
 * {@code quota.probe.interval.ms}, and PostgreSQL is not asked again before that. A contractual limit is
 * never guessed.
 *
 * <p>The table and its statements are {@link QuotaTable}'s.
 *
 * <p>Thread-safe: one JDBC connection, used under this object's lock (a lease serves most requests without
 * it reaching PostgreSQL).
 */
public final class PostgresQuota implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PostgresQuota.class);

    /** How this process connects; tests inject failures. */
    @FunctionalInterface
    interface Connector {
        Connection connect() throws SQLException;
    }

    private final QuotaConfig config;
    private final Connector connector;
    private final LongSupplier nanoTime;
    private final QuotaTable table;
    private final Map<String, KeyState> keys = new HashMap<>();
    private final AtomicLong granted = new AtomicLong();
    private final AtomicLong roundTrips = new AtomicLong();
    private Connection connection;
    private boolean tableReady;
    private long downUntilNanos;
    private boolean down;
    private boolean closed;

    /** Lease and refusal state of one key in this process. */
    private static final class KeyState {
        long windowId = -1;
        long left;
        long leaseEndsNanos;
        long exhaustedUntilNanos;
    }

    /**
     * What PostgreSQL holds for a key's current window.
     *
     * @param windowId   ⌊now_ms / window_ms⌋ in PostgreSQL time
     * @param used       units counted (granted or leased)
     * @param quota      the stored quota
     * @param windowEndsInMs time left in the window, ms
     */
    public record Usage(long windowId, long used, long quota, long windowEndsInMs) {
    }

    /** Connects lazily: PostgreSQL may be down now (requests are then refused until it answers). */
    public PostgresQuota(QuotaConfig config) {
        this(config, () -> connect(config), System::nanoTime);
    }

    PostgresQuota(QuotaConfig config, Connector connector, LongSupplier nanoTime) {
        this.config = Objects.requireNonNull(config, "config");
        this.connector = Objects.requireNonNull(connector, "connector");
        this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
        this.table = new QuotaTable(config.table());
    }

    private static Connection connect(QuotaConfig config) throws SQLException {
        Properties p = new Properties();
        config.user().ifPresent(u -> p.setProperty("user", u));
        config.password().ifPresent(pw -> p.setProperty("password", pw));
        String seconds = Long.toString(Math.max(1, (config.timeout().toMillis() + 999) / 1000));
        p.setProperty("connectTimeout", seconds);
        p.setProperty("socketTimeout", seconds);
        p.setProperty("loginTimeout", seconds);
        p.setProperty("ApplicationName", "sluice-quota");
        return DriverManager.getConnection(config.jdbcUrl(), p);
    }

    /** Whether the key has a contractual quota here. */
    public boolean covers(String key) {
        return config.limitFor(key).isPresent();
    }

    /**
     * Takes one unit of the key's quota: from this process's lease, else from PostgreSQL. A key without a
     * quota is always granted.
     *
     * @return granted (one unit counted); refused with {@link Limit#QUOTA} and the time to the window's end
     *     when the quota is used up; refused with {@link Limit#UNAVAILABLE} and the probe interval when
     *     PostgreSQL cannot decide
     */
    public synchronized Decision take(String key) {
        Optional<QuotaLimit> limit = config.limitFor(key);
        if (limit.isEmpty()) {
            return Decision.grant();
        }
        if (closed) {
            throw new IllegalStateException("quota store is closed");
        }
        KeyState s = keys.computeIfAbsent(key, k -> new KeyState());
        long now = nanoTime.getAsLong();
        if (s.left > 0 && now < s.leaseEndsNanos) {
            return grantFromLease(s);
        }
        if (now < s.exhaustedUntilNanos) {
            return Decision.refused(ceilMillis(s.exhaustedUntilNanos - now), Limit.QUOTA);
        }
        if (down && now < downUntilNanos) {
            return Decision.refused(ceilMillis(downUntilNanos - now), Limit.UNAVAILABLE);
        }
        try {
            return lease(key, limit.get(), s);
        } catch (SQLException e) {
            markDown(e);
            return Decision.refused(Math.max(1, config.probeInterval().toMillis()), Limit.UNAVAILABLE);
        }
    }

    /**
     * A refusal this process already knows without asking PostgreSQL: the quota used up for the current
     * window (and no leased unit left), or PostgreSQL down within the probe interval. Consumes nothing.
     */
    public synchronized Optional<Decision> knownRefusal(String key) {
        KeyState s = keys.get(key);
        if (s == null || !covers(key)) {
            return Optional.empty();
        }
        long now = nanoTime.getAsLong();
        if (s.left > 0 && now < s.leaseEndsNanos) {
            return Optional.empty();
        }
        if (now < s.exhaustedUntilNanos) {
            return Optional.of(Decision.refused(ceilMillis(s.exhaustedUntilNanos - now), Limit.QUOTA));
        }
        if (down && now < downUntilNanos) {
            return Optional.of(Decision.refused(ceilMillis(downUntilNanos - now), Limit.UNAVAILABLE));
        }
        return Optional.empty();
    }

    private Decision grantFromLease(KeyState s) {
        s.left--;
        granted.incrementAndGet();
        return Decision.grant();
    }

    /** Asks PostgreSQL for a lease: the configured size, or what is left of the quota. */
    private Decision lease(String key, QuotaLimit limit, KeyState s) throws SQLException {
        long windowMs = limit.window().toMillis();
        long want = Math.min(config.leaseSize(), limit.limit());
        for (int attempt = 0; attempt < 3; attempt++) {
            long sentNanos = nanoTime.getAsLong();
            Connection c = connection();
            roundTrips.incrementAndGet();
            QuotaTable.Upsert up = table.upsert(c, key, windowMs, limit.limit(), want);
            long nowMs = up.nowMs();
            Long usedAfter = up.usedAfter();
            Long usedBefore = up.usedBefore();
            Long quota = up.quota();
            Long storedWindowMs = up.storedWindowMs();
            down = false;
            long windowId = nowMs / windowMs;
            long windowLeftMs = (windowId + 1) * windowMs - nowMs;
            // measured from the moment the request left: PostgreSQL's now was later, so this ends no later
            // than the window really does
            long windowEndsNanos = sentNanos + windowLeftMs * 1_000_000L;
            if (usedAfter != null) {
                s.windowId = windowId;
                s.left = want;
                s.leaseEndsNanos = windowEndsNanos;
                s.exhaustedUntilNanos = 0;
                return grantFromLease(s);
            }
            if (storedWindowMs != null && storedWindowMs != windowMs) {
                log.error("quota key '{}': PostgreSQL counts windows of {} ms, this process is configured with {} ms;"
                        + " refusing until the configuration agrees", key, storedWindowMs, windowMs);
                return Decision.refused(Math.max(1, config.probeInterval().toMillis()), Limit.QUOTA);
            }
            long left = quota == null || usedBefore == null ? 0 : quota - usedBefore;
            if (left <= 0) {
                s.left = 0;
                s.exhaustedUntilNanos = windowEndsNanos;
                return Decision.refused(Math.max(1, windowLeftMs), Limit.QUOTA);
            }
            want = Math.min(want, left); // someone took units meanwhile: ask for what is left
        }
        // lost the race three times in a row: refuse briefly rather than loop
        return Decision.refused(1, Limit.QUOTA);
    }

    /**
     * Reads the key's current window from PostgreSQL (read-only: a missing table reads as nothing used).
     *
     * @return empty for a key without a quota here
     * @throws SQLException if PostgreSQL cannot answer
     */
    public synchronized Optional<Usage> usage(String key) throws SQLException {
        Optional<QuotaLimit> limit = config.limitFor(key);
        if (limit.isEmpty()) {
            return Optional.empty();
        }
        long windowMs = limit.get().window().toMillis();
        try {
            QuotaTable.Row row = table.read(readConnection(), key, windowMs);
            long windowId = row.nowMs() / windowMs;
            return Optional.of(new Usage(windowId, row.used() == null ? 0 : row.used(),
                    row.quota() == null ? limit.get().limit() : row.quota(), (windowId + 1) * windowMs - row.nowMs()));
        } catch (SQLException e) {
            if ("42P01".equals(e.getSQLState())) { // undefined table: nothing was ever taken
                long nowMs = System.currentTimeMillis();
                long windowId = nowMs / windowMs;
                return Optional.of(new Usage(windowId, 0, limit.get().limit(), (windowId + 1) * windowMs - nowMs));
            }
            markDown(e);
            throw e;
        }
    }

    /** Units this instance handed out so far. */
    public long granted() {
        return granted.get();
    }

    /** Statements sent to PostgreSQL to take units (for the round-trips-per-grant measurement). */
    public long roundTrips() {
        return roundTrips.get();
    }

    /** Whether PostgreSQL failed last time it was asked (requests are refused unless a lease covers them). */
    public synchronized boolean isDown() {
        return down;
    }

    /** The connection, the table created if missing (on the paths that write). */
    private Connection connection() throws SQLException {
        Connection c = readConnection();
        if (!tableReady) {
            table.create(c);
            tableReady = true;
        }
        return c;
    }

    private Connection readConnection() throws SQLException {
        if (connection == null) {
            connection = connector.connect();
            connection.setAutoCommit(true);
        }
        return connection;
    }

    private void markDown(SQLException e) {
        if (!down) {
            log.warn("quota store unavailable, refusing quota-limited requests (fail-closed): {}", e.getMessage());
        }
        down = true;
        downUntilNanos = nanoTime.getAsLong() + config.probeInterval().toNanos();
        closeConnection();
    }

    private void closeConnection() {
        Connection c = connection;
        connection = null;
        tableReady = false;
        if (c != null) {
            try {
                c.close();
            } catch (SQLException ex) {
                log.debug("closing the failed quota connection: {}", ex.toString());
            }
        }
    }

    private static long ceilMillis(long nanos) {
        return Math.max(1, (nanos + 999_999) / 1_000_000);
    }

    /** Gives unused leased units of the current windows back (best effort), then closes the connection. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        long now = nanoTime.getAsLong();
        for (Map.Entry<String, KeyState> e : keys.entrySet()) {
            KeyState s = e.getValue();
            if (s.left > 0 && now < s.leaseEndsNanos && !down) {
                try {
                    table.giveBack(connection(), e.getKey(), s.windowId, s.left);
                    s.left = 0;
                } catch (SQLException ex) {
                    log.info("could not give back {} leased quota units of '{}': {}", s.left, e.getKey(), ex.getMessage());
                    break;
                }
            }
        }
        closeConnection();
    }
}
