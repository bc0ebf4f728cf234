package dev.sluice.sender.budget;

import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code budget.lua} as {@link RedisGcraBudget} calls it: the script text loaded from the class path once, its
 * SHA-1, and {@link #call}: one EVALSHA, and on NOSCRIPT (SCRIPT FLUSH, a restart, a failover to a node that never ran
 * it) one EVAL, which runs the script on the node owning the keys and caches it there. Every call is counted
 * ({@link #roundTrips()}). Redis errors become {@link BudgetUnavailableException}. Immutable apart from the
 * {@link LongAdder}; called from any sending thread (Lettuce's synchronous commands are thread-safe).
 */
final class BudgetScript {
    private static final Logger log = LoggerFactory.getLogger(BudgetScript.class);
    static final String RESOURCE = "/dev/sluice/sender/budget/budget.lua";
    /** The script text, read from the class path once per process, and its SHA-1 (what EVALSHA names). */
    static final String TEXT = load();
    static final String SHA1 = sha1(TEXT);

    private final RedisClusterCommands<byte[], byte[]> redis;
    private final String script;
    private final String sha;
    private final LongAdder roundTrips = new LongAdder();

    BudgetScript(RedisClusterCommands<byte[], byte[]> redis) {
        this.redis = redis;
        this.script = TEXT;
        this.sha = SHA1;
    }

    String sha() {
        return sha;
    }

    /** EVALSHA/EVAL calls made so far. */
    long roundTrips() {
        return roundTrips.sum();
    }

    /** One call of the script; the reply is a multi-bulk (integers and, for ALREADY_SENT, the mark's bytes). */
    List<Object> call(byte[][] keys, byte[][] args) {
        try {
            try {
                roundTrips.increment();
                return redis.evalsha(sha, ScriptOutputType.MULTI, keys, args);
            } catch (RedisNoScriptException e) {
                // EVAL runs it on the node that owns the keys (routed by the bot's slot on a cluster) and caches it
                // there, so the next EVALSHA finds it.
                log.warn("budget script missing in Redis (NOSCRIPT); running it by EVAL, which loads it again");
                roundTrips.increment();
                return redis.eval(script, ScriptOutputType.MULTI, keys, args);
            }
        } catch (RedisException e) {
            throw new BudgetUnavailableException("Redis budget decision failed: " + e.getMessage(), e);
        }
    }

    /** The script text. */
    static String load() {
        try (InputStream in = BudgetScript.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + RESOURCE);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String sha1(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
