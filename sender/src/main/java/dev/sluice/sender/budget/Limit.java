package dev.sluice.sender.budget;

/** Which limit refused a budget request. The codes are what {@code budget.lua} returns. */
public enum Limit {
    /** Nothing refused: the request was granted. */
    NONE(0),
    /** The bot's overall rate (Telegram FAQ: about 30 msg/s per bot; AIMD may lower it after 429s). */
    GLOBAL(1),
    /** The chat's rate (Telegram FAQ: about 1 msg/s per chat). */
    CHAT(2),
    /** The group's rate (Telegram FAQ: 20 messages per minute per group). */
    GROUP(3),
    /** A penalty gate on the chat, written after a 429 of scope {@link PenaltyScope#CHAT}. */
    GATE_CHAT(4),
    /** A penalty gate on the group, written after a 429 of scope {@link PenaltyScope#GROUP}. */
    GATE_GROUP(5),
    /** A penalty gate on the whole bot, written after a 429 of scope {@link PenaltyScope#BOT}. */
    GATE_BOT(6),
    /** A backfill request refused because the budget left is the headroom reserved for live traffic. */
    HEADROOM(7),
    /** The shared budget is unreachable and the outage mode is fail-closed: the wait is a probe interval. */
    UNAVAILABLE(8),
    /**
     * A contractual quota (PostgreSQL quota mode, {@code dev.sluice.sender.budget.quota}) is used up for its window:
     * the wait runs to the window's end. Never returned by {@code budget.lua}.
     */
    QUOTA(9),
    /**
     * Not a limit: the request asked to check the message's sent mark (its idempotency key) and the message was
     * already sent (a redelivery). Nothing was consumed; the message must not be sent again.
     */
    ALREADY_SENT(10);

    private static final Limit[] BY_CODE = values();

    private final int code;

    Limit(int code) {
        this.code = code;
    }

    /** The integer the Lua script returns for this limit. */
    public int code() {
        return code;
    }

    /** Whether this is one of the penalty gates (a 429 answered by the provider). */
    public boolean isGate() {
        return this == GATE_CHAT || this == GATE_GROUP || this == GATE_BOT;
    }

    public static Limit ofCode(long code) {
        if (code < 0 || code >= BY_CODE.length) {
            throw new IllegalArgumentException("unknown limit code " + code);
        }
        return BY_CODE[(int) code];
    }
}
