package dev.sluice.sender.budget.quota;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The SQL of {@link PostgresQuota}: the table's DDL and the three statements on it (take units by one atomic upsert
 * that refuses to pass the quota, give units back, read a window), each run on a connection the caller owns. Window
 * ids and "now" come from PostgreSQL's clock inside each statement. Immutable (the statements' text is built once
 * from the table name); the caller serialises use of its connection.
 */
final class QuotaTable {
    /** What one upsert saw: PostgreSQL's now, and the row after (granted) or as it stood (refused); nulls: no row. */
    record Upsert(long nowMs, Long usedAfter, Long usedBefore, Long quota, Long storedWindowMs) {
    }

    /** A window as PostgreSQL holds it: its now, and the row's used and quota (null: no row yet). */
    record Row(long nowMs, Long used, Long quota) {
    }

    private final String table;
    private final String upsertSql;
    private final String giveBackSql;
    private final String usageSql;

    QuotaTable(String table) {
        this.table = table;
        this.upsertSql = "WITH t AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms), "
                + "up AS (INSERT INTO " + table + " AS q (quota_key, window_id, window_ms, quota, used) "
                + "SELECT ?, t.now_ms / ?, ?, ?, ? FROM t "
                + "ON CONFLICT (quota_key, window_id) DO UPDATE SET used = q.used + EXCLUDED.used, updated_at = clock_timestamp() "
                + "WHERE q.used + EXCLUDED.used <= LEAST(q.quota, EXCLUDED.quota) AND q.window_ms = EXCLUDED.window_ms "
                + "RETURNING q.used) "
                + "SELECT t.now_ms, (SELECT used FROM up), "
                + "(SELECT used FROM " + table + " s WHERE s.quota_key = ? AND s.window_id = t.now_ms / ?), "
                + "(SELECT LEAST(s.quota, ?) FROM " + table + " s WHERE s.quota_key = ? AND s.window_id = t.now_ms / ?), "
                + "(SELECT window_ms FROM " + table + " s WHERE s.quota_key = ? AND s.window_id = t.now_ms / ?) FROM t";
        this.giveBackSql = "UPDATE " + table + " SET used = used - ?, updated_at = clock_timestamp() "
                + "WHERE quota_key = ? AND window_id = ? AND used >= ?";
        this.usageSql = "WITH t AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms) "
                + "SELECT t.now_ms, s.used, s.quota FROM t LEFT JOIN " + table + " s "
                + "ON s.quota_key = ? AND s.window_id = t.now_ms / ?";
    }

    /** CREATE TABLE IF NOT EXISTS; a concurrent creation by another process is not an error. */
    void create(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("CREATE TABLE IF NOT EXISTS " + table + " ("
                    + "quota_key text NOT NULL, window_id bigint NOT NULL, window_ms bigint NOT NULL, "
                    + "quota bigint NOT NULL CHECK (quota >= 1), used bigint NOT NULL CHECK (used >= 0), "
                    + "updated_at timestamptz NOT NULL DEFAULT clock_timestamp(), "
                    + "PRIMARY KEY (quota_key, window_id), CHECK (used <= quota))");
        } catch (SQLException e) {
            // two processes creating the table at once: the loser sees a unique violation on pg_type
            if (!"23505".equals(e.getSQLState()) && !"42P07".equals(e.getSQLState())) {
                throw e;
            }
        }
    }

    /** Counts {@code want} units of the key's current window unless that passes {@code quota}: one statement. */
    Upsert upsert(Connection c, String key, long windowMs, long quota, long want) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(upsertSql)) {
            int i = 1;
            ps.setString(i++, key);
            ps.setLong(i++, windowMs);
            ps.setLong(i++, windowMs);
            ps.setLong(i++, quota);
            ps.setLong(i++, want);
            ps.setString(i++, key);
            ps.setLong(i++, windowMs);
            ps.setLong(i++, quota);
            ps.setString(i++, key);
            ps.setLong(i++, windowMs);
            ps.setString(i++, key);
            ps.setLong(i++, windowMs);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new Upsert(rs.getLong(1), nullableLong(rs, 2), nullableLong(rs, 3), nullableLong(rs, 4),
                        nullableLong(rs, 5));
            }
        }
    }

    /** Gives {@code units} back to a window (never below 0). */
    void giveBack(Connection c, String key, long windowId, long units) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(giveBackSql)) {
            ps.setLong(1, units);
            ps.setString(2, key);
            ps.setLong(3, windowId);
            ps.setLong(4, units);
            ps.executeUpdate();
        }
    }

    /** Reads the key's current window (read-only). */
    Row read(Connection c, String key, long windowMs) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(usageSql)) {
            ps.setString(1, key);
            ps.setLong(2, windowMs);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new Row(rs.getLong(1), nullableLong(rs, 2), nullableLong(rs, 3));
            }
        }
    }

    private static Long nullableLong(ResultSet rs, int column) throws SQLException {
        long v = rs.getLong(column);
        return rs.wasNull() ? null : v;
    }
}
