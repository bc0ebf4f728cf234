package dev.sluice.testkit;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The rate limits FakeTelegram enforces, as a pure, single-threaded-by-lock class without HTTP so it
 * can be tested with a fake clock (every method takes {@code nowMillis}).
 *
 * <p>Rules, per bot (the token's id part), after the Telegram Bot API FAQ ("My bot is hitting limits,
 * how do I avoid this?"):
 * <ul>
 *   <li><b>bot</b>: at most {@link FakeTelegramLimits#globalPerSecond()} accepted messages in any sliding
 *       1-second window (two sends at {@code a <= b} share a window iff {@code b - a < 1000 ms});</li>
 *   <li><b>chat</b>: a GCRA per chat with emission interval {@code I = 1000 / chatPerSecond} ms and burst
 *       {@code b = chatBurst}: a send at {@code t} passes iff {@code t >= TAT - (b - 1) * I}, then
 *       {@code TAT = max(TAT, t) + I};</li>
 *   <li><b>group</b> (negative chat id or {@code @username}): at most
 *       {@link FakeTelegramLimits#groupPerMinute()} accepted in any sliding 60-second window.</li>
 * </ul>
 * A refused send gets {@code retry_after = ceil(wait / 1 s)} (at least 1), where {@code wait} is the time
 * until it could pass every rule; that also opens a <b>penalty</b> for the refusing scope (the bot for
 * the global rule, the chat otherwise) of {@code retry_after} seconds. Any send during a penalty is
 * refused and extends it: {@code penalty_until = now + retry_after}. Refusals consume no budget.
 * Not thread-safe on its own: {@link FakeTelegram} calls it under one lock.
 */
public final class TelegramLimiter {

    /** Which rule refused a send. */
    public enum Scope { BOT, CHAT, GROUP }

    /**
     * The answer for one send.
     *
     * @param accepted true if the send passed and was counted
     * @param scope the refusing scope, null when accepted
     * @param retryAfterSeconds whole seconds to wait (at least 1), 0 when accepted
     */
    public record Decision(boolean accepted, Scope scope, long retryAfterSeconds) {
        static final Decision ACCEPT = new Decision(true, null, 0);

        static Decision refuse(Scope scope, long retryAfterSeconds) {
            return new Decision(false, scope, retryAfterSeconds);
        }
    }

    private record Penalty(long untilMillis, long retryAfterSeconds) {
    }

    private static final long SECOND_MS = 1000;
    private static final long MINUTE_MS = 60_000;

    private final FakeTelegramLimits limits;
    private final double chatIntervalMs;
    private final Map<String, ArrayDeque<Long>> botWindows = new HashMap<>();
    private final Map<String, ArrayDeque<Long>> groupWindows = new HashMap<>();
    private final Map<String, Double> chatTat = new HashMap<>();
    private final Map<String, Penalty> penalties = new HashMap<>();

    public TelegramLimiter(FakeTelegramLimits limits) {
        this.limits = limits;
        this.chatIntervalMs = SECOND_MS / limits.chatPerSecond();
    }

    /** True for chat ids Telegram treats as groups, supergroups or channels: negative ids and {@code @username}. */
    public static boolean isGroup(String chatId) {
        return chatId.startsWith("-") || chatId.startsWith("@");
    }

    /** Telegram's limit for a bot's requests that carry {@code allow_paid_broadcast=true}: 1000 per second. */
    public static final int PAID_BROADCAST_PER_SECOND = 1000;

    /**
     * Decides one send of {@code botId} to {@code chatId} at {@code nowMillis} and, if it passes, counts it.
     */
    public Decision tryAcquire(String botId, String chatId, long nowMillis) {
        return tryAcquire(botId, chatId, nowMillis, false);
    }

    /**
     * As {@link #tryAcquire(String, String, long)}; a request with {@code allow_paid_broadcast=true} is held to
     * {@link #PAID_BROADCAST_PER_SECOND} in the bot's sliding second instead of {@code globalPerSecond} (the window
     * counts every accepted request of the bot, paid or not; chat and group limits apply alike).
     */
    public Decision tryAcquire(String botId, String chatId, long nowMillis, boolean paidBroadcast) {
        Decision penalised = activePenalty(botId, chatId, nowMillis);
        if (penalised != null) {
            return penalised;
        }
        boolean group = isGroup(chatId);
        String chatKey = chatKey(botId, chatId);

        long waitMs = 0;
        Scope scope = null;

        ArrayDeque<Long> botWindow = botWindows.computeIfAbsent(botId, k -> new ArrayDeque<>());
        int botLimit = paidBroadcast ? Math.max(limits.globalPerSecond(), PAID_BROADCAST_PER_SECOND) : limits.globalPerSecond();
        long botWait = slidingWindowWait(botWindow, botLimit, SECOND_MS, nowMillis);
        if (botWait > waitMs) {
            waitMs = botWait;
            scope = Scope.BOT;
        }
        double tat = chatTat.getOrDefault(chatKey, Double.NEGATIVE_INFINITY);
        double allowAt = tat - (limits.chatBurst() - 1) * chatIntervalMs;
        long chatWait = (long) Math.ceil(allowAt - nowMillis);
        if (chatWait > waitMs) {
            waitMs = chatWait;
            scope = Scope.CHAT;
        }
        ArrayDeque<Long> groupWindow = null;
        if (group) {
            groupWindow = groupWindows.computeIfAbsent(chatKey, k -> new ArrayDeque<>());
            long groupWait = slidingWindowWait(groupWindow, limits.groupPerMinute(), MINUTE_MS, nowMillis);
            if (groupWait > waitMs) {
                waitMs = groupWait;
                scope = Scope.GROUP;
            }
        }

        if (scope != null) {
            long retryAfter = Math.max(1, (waitMs + SECOND_MS - 1) / SECOND_MS);
            String penaltyKey = scope == Scope.BOT ? botKey(botId) : chatKey;
            penalties.put(penaltyKey, new Penalty(nowMillis + retryAfter * SECOND_MS, retryAfter));
            return Decision.refuse(scope, retryAfter);
        }

        // keep as many as the larger limit needs: a paid request may count the unpaid ones of the same second
        record(botWindow, Math.max(limits.globalPerSecond(), PAID_BROADCAST_PER_SECOND), nowMillis);
        chatTat.put(chatKey, Math.max(tat, nowMillis) + chatIntervalMs);
        if (groupWindow != null) {
            record(groupWindow, limits.groupPerMinute(), nowMillis);
        }
        return Decision.ACCEPT;
    }

    /**
     * Opens (or replaces) a penalty as if Telegram had answered 429 with {@code retryAfterSeconds}:
     * for the whole bot when {@code chatId} is null, else for that chat. Used for forced 429s.
     */
    public Decision penalise(String botId, String chatId, long retryAfterSeconds, long nowMillis) {
        if (retryAfterSeconds < 1) {
            throw new IllegalArgumentException("retryAfterSeconds: must be >= 1, was " + retryAfterSeconds);
        }
        String key = chatId == null ? botKey(botId) : chatKey(botId, chatId);
        penalties.put(key, new Penalty(nowMillis + retryAfterSeconds * SECOND_MS, retryAfterSeconds));
        Scope scope = chatId == null ? Scope.BOT : (isGroup(chatId) ? Scope.GROUP : Scope.CHAT);
        return Decision.refuse(scope, retryAfterSeconds);
    }

    /** Forgets all counters and penalties. */
    public void reset() {
        botWindows.clear();
        groupWindows.clear();
        chatTat.clear();
        penalties.clear();
    }

    private Decision activePenalty(String botId, String chatId, long nowMillis) {
        Decision bot = extendIfActive(botKey(botId), Scope.BOT, nowMillis);
        if (bot != null) {
            return bot;
        }
        return extendIfActive(chatKey(botId, chatId), isGroup(chatId) ? Scope.GROUP : Scope.CHAT, nowMillis);
    }

    private Decision extendIfActive(String key, Scope scope, long nowMillis) {
        Penalty penalty = penalties.get(key);
        if (penalty == null) {
            return null;
        }
        if (nowMillis >= penalty.untilMillis()) {
            penalties.remove(key);
            return null;
        }
        // Telegram: calling during a penalty extends it.
        penalties.put(key, new Penalty(nowMillis + penalty.retryAfterSeconds() * SECOND_MS, penalty.retryAfterSeconds()));
        return Decision.refuse(scope, penalty.retryAfterSeconds());
    }

    // ms until a send at now fits: the oldest of the last `max` sends must be at least windowMs old.
    private static long slidingWindowWait(ArrayDeque<Long> window, int max, long windowMs, long nowMillis) {
        while (!window.isEmpty() && nowMillis - window.peekFirst() >= windowMs) {
            window.pollFirst();
        }
        if (window.size() < max) {
            return 0;
        }
        return window.peekFirst() + windowMs - nowMillis;
    }

    private static void record(ArrayDeque<Long> window, int max, long nowMillis) {
        window.addLast(nowMillis);
        while (window.size() > max) {
            window.pollFirst();
        }
    }

    private static String botKey(String botId) {
        return botId;
    }

    private static String chatKey(String botId, String chatId) {
        return botId + '|' + chatId;
    }
}
