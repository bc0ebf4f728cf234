package dev.sluice.sender.budget;

import java.util.regex.Pattern;

/**
 * Redis key names of the budget. Every key of one bot carries the hash tag {@code {<botId>}}, so a bot's
 * keys live in one Redis Cluster slot and the script may touch them together.
 */
public final class BudgetKeys {
    /** Bot ids are logical names; braces would break the hash tag. */
    public static final Pattern BOT_ID = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
    public static final String PREFIX = "sluice:";

    private BudgetKeys() {
    }

    public static String globalTat(String botId) {
        return tag(botId) + ":tat:global";
    }

    public static String chatTat(String botId, String chatId) {
        return tag(botId) + ":tat:chat:" + chatId;
    }

    public static String chatGate(String botId, String chatId) {
        return tag(botId) + ":gate:chat:" + chatId;
    }

    public static String botGate(String botId) {
        return tag(botId) + ":gate:bot";
    }

    /** {@code sluice:{<botId>}}; fails on a bot id that is not a plain name. */
    public static String tag(String botId) {
        if (botId == null || !BOT_ID.matcher(botId).matches()) {
            throw new IllegalArgumentException("invalid bot id '" + botId + "': expected " + BOT_ID.pattern());
        }
        return PREFIX + "{" + botId + "}";
    }
}
