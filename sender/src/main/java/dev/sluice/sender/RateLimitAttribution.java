package dev.sluice.sender;

import dev.sluice.metrics.RateLimitScope;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * Decides which limit a 429 belongs to, and remembers bot-wide penalties this instance inferred.
 *
 * <p>Telegram's 429 ({@code Too Many Requests: retry after N}) does not name its scope, and a call made
 * during a penalty extends it. Treating a bot-wide penalty as a chat penalty is the costly mistake: every
 * other chat of the bot keeps calling, each call is refused and extends the penalty, and the bot never
 * recovers. So the scope is inferred:
 * <ul>
 * <li>{@link RateLimitScope#GLOBAL} (the whole bot) when at least {@code minChats} distinct chats of the bot
 *     were refused within {@code window}, or while a bot-wide penalty inferred earlier is still running
 *     (the calls that were in flight when it began come back refused too, and each extends it);</li>
 * <li>{@link RateLimitScope#GROUP} for a group, supergroup or channel (negative id or {@code @name}):
 *     Telegram Bot API FAQ, at most 20 messages per minute per group;</li>
 * <li>{@link RateLimitScope#CHAT} otherwise.</li>
 * </ul>
 * A lone 429 on one chat stays a chat penalty, so one slow chat never stops the bot. Thread-safe; time is
 * passed in (epoch ms).
 */
public final class RateLimitAttribution {
    private record Refusal(String chatId, long atMs) {
    }

    private final long windowMs;
    private final int minChats;
    private final Map<String, ArrayDeque<Refusal>> recent = new HashMap<>();
    private final Map<String, Long> botGateUntilMs = new HashMap<>();

    /**
     * @param window   how close together refusals of distinct chats must be to count as one bot-wide penalty
     * @param minChats distinct chats refused within {@code window} that mean "the whole bot", at least 2
     */
    public RateLimitAttribution(Duration window, int minChats) {
        if (window.isNegative() || window.isZero()) {
            throw new IllegalArgumentException("window must be positive, was " + window);
        }
        if (minChats < 2) {
            throw new IllegalArgumentException("minChats must be at least 2, was " + minChats);
        }
        this.windowMs = window.toMillis();
        this.minChats = minChats;
    }

    /**
     * Attributes one 429 answered at {@code nowMs} for {@code botId}/{@code chatId}. When the answer is
     * GLOBAL, the bot's gate is raised to {@code nowMs + retryAfter} (an existing later gate is kept).
     */
    public synchronized RateLimitScope attribute(String botId, String chatId, Duration retryAfter, long nowMs) {
        ArrayDeque<Refusal> refusals = recent.computeIfAbsent(botId, b -> new ArrayDeque<>());
        refusals.addLast(new Refusal(chatId, nowMs));
        Set<String> chats = new HashSet<>();
        for (Iterator<Refusal> it = refusals.iterator(); it.hasNext(); ) {
            Refusal r = it.next();
            if (nowMs - r.atMs() > windowMs) {
                it.remove();
            } else {
                chats.add(r.chatId());
            }
        }
        boolean botWide = chats.size() >= minChats || botGateUntilMs(botId) > nowMs;
        if (botWide) {
            botGateUntilMs.merge(botId, nowMs + retryAfter.toMillis(), Math::max);
            return RateLimitScope.GLOBAL;
        }
        return isGroup(chatId) ? RateLimitScope.GROUP : RateLimitScope.CHAT;
    }

    /**
     * A 429 the provider itself scoped to the whole bot (an HTTP provider limits its API key, not one
     * recipient): always {@link RateLimitScope#GLOBAL}; the bot's gate is raised to {@code nowMs + retryAfter}.
     */
    public synchronized RateLimitScope botWide(String botId, Duration retryAfter, long nowMs) {
        botGateUntilMs.merge(botId, nowMs + retryAfter.toMillis(), Math::max);
        return RateLimitScope.GLOBAL;
    }

    /** Until when (epoch ms) this instance holds back every call of {@code botId}; 0 when not gated. */
    public synchronized long botGateUntilMs(String botId) {
        Long until = botGateUntilMs.get(botId);
        return until == null ? 0 : until;
    }

    /** Telegram treats negative chat ids and {@code @username} as groups, supergroups or channels. */
    public static boolean isGroup(String chatId) {
        return chatId.startsWith("-") || chatId.startsWith("@");
    }
}
