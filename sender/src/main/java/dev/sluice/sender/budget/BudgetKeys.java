package dev.sluice.sender.budget;

import java.util.regex.Pattern;

/**
 * Redis key names of the budget. Every key of one bot carries the hash tag {@code {<botId>}}, so a bot's
 * keys live in one Redis Cluster slot and the script may touch them together.
 *
 * <pre>
 * sluice:{bot}:tat:global        the bot's GCRA TAT (µs)
 * sluice:{bot}:tat:backfill      the backfill lane's GCRA TAT (µs)
 * sluice:{bot}:gate:bot          bot-wide 429 penalty: the instant it lifts (µs)
 * sluice:{bot}:aimd              hash {m: rate multiplier ppm, t: µs from which it climbs}
 * sluice:{bot}:tat:chat:&lt;id&gt;     a chat's GCRA TAT         sluice:{bot}:gate:chat:&lt;id&gt;  its 429 gate
 * sluice:{bot}:tat:group:&lt;id&gt;    a group's GCRA TAT        sluice:{bot}:gate:group:&lt;id&gt; its 429 gate
 * </pre>
 */
public final class BudgetKeys {
    /**
     * Bot ids are logical names; braces would break the hash tag. Colons are allowed so that the limit key of
     * an HTTP provider ({@code ext:sms-api:prod}: the provider plus its API key or plan) is a budget key too.
     */
    public static final Pattern BOT_ID = Pattern.compile("[A-Za-z0-9_.:-]{1,64}");
    public static final String PREFIX = "sluice:";
    static final String GLOBAL_TAT = ":tat:global";
    static final String BACKFILL_TAT = ":tat:backfill";
    static final String BOT_GATE = ":gate:bot";
    static final String AIMD = ":aimd";
    static final String CHAT_TAT = ":tat:chat:";
    static final String CHAT_GATE = ":gate:chat:";
    static final String GROUP_TAT = ":tat:group:";
    static final String GROUP_GATE = ":gate:group:";

    private BudgetKeys() {
    }

    public static String globalTat(String botId) {
        return tag(botId) + GLOBAL_TAT;
    }

    public static String backfillTat(String botId) {
        return tag(botId) + BACKFILL_TAT;
    }

    public static String chatTat(String botId, String chatId) {
        return tag(botId) + CHAT_TAT + chatId;
    }

    public static String chatGate(String botId, String chatId) {
        return tag(botId) + CHAT_GATE + chatId;
    }

    public static String groupTat(String botId, String chatId) {
        return tag(botId) + GROUP_TAT + chatId;
    }

    public static String groupGate(String botId, String chatId) {
        return tag(botId) + GROUP_GATE + chatId;
    }

    public static String botGate(String botId) {
        return tag(botId) + BOT_GATE;
    }

    public static String aimd(String botId) {
        return tag(botId) + AIMD;
    }

    /** {@code sluice:{<botId>}}; fails on a bot id that is not a plain name. */
    public static String tag(String botId) {
        if (botId == null || !BOT_ID.matcher(botId).matches()) {
            throw new IllegalArgumentException("invalid bot id '" + botId + "': expected " + BOT_ID.pattern());
        }
        return PREFIX + "{" + botId + "}";
    }
}
