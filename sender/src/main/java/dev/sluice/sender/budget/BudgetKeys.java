package dev.sluice.sender.budget;

import dev.sluice.chat.ChatIds;
import dev.sluice.chat.Identifiers;
import java.util.regex.Pattern;

/**
 * Key names of the budget. Every Redis key of one bot carries the hash tag {@code {<botId>}}, so a bot's
 * keys live in one Redis Cluster slot and the script may touch them together. In Redis (packed strings,
 * one GET each; fields in µs since the epoch or ppm, empty = absent; see {@code budget.lua}):
 *
 * <pre>
 * sluice:{bot}:bot               "global TAT|bot gate|AIMD multiplier|AIMD climb start|backfill TAT"
 * sluice:{bot}:chat:&lt;id&gt;         "chat TAT|chat 429 gate"
 * sluice:{bot}:group:&lt;id&gt;        "group TAT|group 429 gate"
 * sluice:{bot}:sent:&lt;message id&gt; the sent mark (idempotency key) of a message, see RedisSentMarks
 * sluice:{bot}:arrivals          "grant seq|seq:floor,..." the arrival guard's numbering and floors
 * sluice:{bot}:recent429         "end|reported at" the latest-ending chat 429 of the last second
 * sluice:{bot}:critical          "1" while a CRITICAL grant is recent (budget.reservation.critical.memory.ms)
 * sluice:{bot}:probe             "gate end" the bot gate that closed behind a penalty probe (budget.penalty.probe.window.ms)
 * sluice:{bot}:limits            hash: sender instance → "expiry ms|limits|nonce" (SharedLimitsCheck, budget.limits.check)
 * </pre>
 *
 * The {@code tat:*} and {@code gate:*} names below name the tables of the in-process {@link LocalGcraBudget}.
 */
public final class BudgetKeys {
    /**
     * Bot ids are logical names; braces would break the hash tag. Colons are allowed so that the limit key of
     * an HTTP provider ({@code ext:sms-api:prod}: the provider plus its API key or plan) is a budget key too.
     */
    public static final Pattern BOT_ID = Pattern.compile(Identifiers.BOT_ID_PATTERN);
    public static final String PREFIX = "sluice:";
    static final String BOT_STATE = ":bot";
    static final String CHAT = ":chat:";
    static final String GROUP = ":group:";
    static final String SENT = ":sent:";
    static final String ARRIVALS = ":arrivals";
    static final String CRITICAL = ":critical";
    static final String PROBE = ":probe";
    static final String RECENT_429 = ":recent429";
    static final String GLOBAL_TAT = ":tat:global";
    static final String BACKFILL_TAT = ":tat:backfill";
    static final String BOT_GATE = ":gate:bot";
    static final String CHAT_TAT = ":tat:chat:";
    static final String CHAT_GATE = ":gate:chat:";
    static final String GROUP_TAT = ":tat:group:";
    static final String GROUP_GATE = ":gate:group:";

    private BudgetKeys() {
    }

    /** {@code sluice:{<bot>}:bot}: the bot's global TAT, gate, AIMD state and backfill TAT. */
    public static String botState(String botId) {
        return tag(botId) + BOT_STATE;
    }

    /** {@code sluice:{<bot>}:chat:<id>}: the chat's TAT and gate. */
    public static String chat(String botId, String chatId) {
        return tag(botId) + CHAT + ChatIds.normalise(chatId);
    }

    /** {@code sluice:{<bot>}:group:<id>}: the group's TAT and gate. */
    public static String group(String botId, String chatId) {
        return tag(botId) + GROUP + ChatIds.normalise(chatId);
    }

    /** {@code sluice:{<bot>}:sent:<message id>}: a message's sent mark. */
    public static String sentMark(String botId, String messageId) {
        return tag(botId) + SENT + messageId;
    }

    /** {@code sluice:{<bot>}:limits}: the live senders' published limits of the bot (SharedLimitsCheck). */
    public static String limits(String botId) {
        return tag(botId) + ":limits";
    }

    /** {@code sluice:{<bot>}:arrivals}: the arrival guard's grant numbering and floors. */
    public static String arrivals(String botId) {
        return tag(botId) + ARRIVALS;
    }

    public static String globalTat(String botId) {
        return tag(botId) + GLOBAL_TAT;
    }

    public static String backfillTat(String botId) {
        return tag(botId) + BACKFILL_TAT;
    }

    public static String chatTat(String botId, String chatId) {
        return tag(botId) + CHAT_TAT + ChatIds.normalise(chatId);
    }

    public static String chatGate(String botId, String chatId) {
        return tag(botId) + CHAT_GATE + ChatIds.normalise(chatId);
    }

    public static String groupTat(String botId, String chatId) {
        return tag(botId) + GROUP_TAT + ChatIds.normalise(chatId);
    }

    public static String groupGate(String botId, String chatId) {
        return tag(botId) + GROUP_GATE + ChatIds.normalise(chatId);
    }

    public static String botGate(String botId) {
        return tag(botId) + BOT_GATE;
    }

    /** {@code sluice:{<botId>}}; fails on a bot id that is not a plain name. */
    public static String tag(String botId) {
        if (!isBotId(botId)) {
            throw new IllegalArgumentException("invalid bot id '" + botId + "': expected " + BOT_ID.pattern());
        }
        return PREFIX + "{" + botId + "}";
    }

    /**
     * Whether {@code botId} matches {@link #BOT_ID}, checked without a regex matcher: every budget request validates its
     * bot id (issue 19: a {@code Matcher} and its arrays per request on the sending threads). The one rule the topology
     * and the tools check too ({@link Identifiers#isBotId}).
     */
    public static boolean isBotId(String botId) {
        return Identifiers.isBotId(botId);
    }
}
