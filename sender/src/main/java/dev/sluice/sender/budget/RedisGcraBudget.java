package dev.sluice.sender.budget;

import dev.sluice.metrics.BudgetState;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shared budget in Redis: every decision is one call of {@code budget.lua} (EVALSHA; on NOSCRIPT the
 * script is loaded again and the call repeated), which checks the chat's penalty gate, the bot's global
 * GCRA and the chat's GCRA atomically on Redis server time. One Lettuce connection per instance; Lettuce
 * connections are thread-safe and pipeline concurrent callers.
 */
public final class RedisGcraBudget implements BudgetPort {
    private static final Logger log = LoggerFactory.getLogger(RedisGcraBudget.class);
    static final String SCRIPT_RESOURCE = "/dev/sluice/sender/budget/budget.lua";

    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> redis;
    private final BudgetLimits limits;
    private final String script;
    private volatile String sha;

    /**
     * @param redisUrl       e.g. {@code redis://localhost:6379}
     * @param limits         the GCRA parameters applied to every bot
     * @param commandTimeout bound on each Redis command
     */
    public RedisGcraBudget(String redisUrl, BudgetLimits limits, Duration commandTimeout) {
        this.limits = Objects.requireNonNull(limits, "limits");
        this.script = loadScript();
        RedisURI uri = RedisURI.create(redisUrl);
        uri.setTimeout(commandTimeout);
        this.client = RedisClient.create(uri);
        try {
            this.connection = client.connect();
        } catch (RedisException e) {
            client.shutdown();
            throw new BudgetUnavailableException("cannot connect to Redis for the budget: " + e.getMessage(), e);
        }
        this.redis = connection.sync();
        this.sha = redis.scriptLoad(script);
        log.info("budget script loaded (sha {}), limits {}", sha, limits);
    }

    @Override
    public BudgetState state() {
        return BudgetState.SHARED;
    }

    @Override
    public Decision tryAcquire(BudgetRequest request) {
        String botId = request.botId();
        String chatId = request.chatId();
        List<Long> reply = call(new String[] {
                BudgetKeys.globalTat(botId), BudgetKeys.chatTat(botId, chatId), BudgetKeys.chatGate(botId, chatId),
                BudgetKeys.botGate(botId)},
                "acquire",
                Long.toString(limits.globalIntervalMicros()), Long.toString(limits.globalToleranceMicros()),
                Long.toString(limits.chatIntervalMicros()), Long.toString(limits.chatToleranceMicros()));
        if (reply.get(0) == 1L) {
            return Decision.grant();
        }
        return Decision.refused(reply.get(1), Limit.ofCode(reply.get(2)));
    }

    @Override
    public void penalize(String botId, PenaltyScope scope, String chatId, Duration penalty) {
        String gate = scope == PenaltyScope.BOT ? BudgetKeys.botGate(botId) : BudgetKeys.chatGate(botId, chatId);
        call(new String[] {
                BudgetKeys.globalTat(botId), BudgetKeys.chatTat(botId, chatId), gate, BudgetKeys.botGate(botId)},
                "penalize", Long.toString(Math.max(1, penalty.toMillis())));
    }

    private List<Long> call(String[] keys, String... args) {
        try {
            try {
                return redis.evalsha(sha, ScriptOutputType.MULTI, keys, args);
            } catch (RedisNoScriptException e) {
                // SCRIPT FLUSH or a failover to a replica without the script: load it again once.
                log.warn("budget script missing in Redis (NOSCRIPT); loading it again");
                sha = redis.scriptLoad(script);
                return redis.evalsha(sha, ScriptOutputType.MULTI, keys, args);
            }
        } catch (RedisException e) {
            throw new BudgetUnavailableException("Redis budget decision failed: " + e.getMessage(), e);
        }
    }

    /** The script text, for tools that want to inspect or benchmark it. */
    public static String loadScript() {
        try (InputStream in = RedisGcraBudget.class.getResourceAsStream(SCRIPT_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + SCRIPT_RESOURCE);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        try {
            connection.close();
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }
}
