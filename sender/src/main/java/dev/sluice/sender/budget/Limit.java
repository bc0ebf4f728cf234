package dev.sluice.sender.budget;

/** Which limit refused a budget request. */
public enum Limit {
    /** Nothing refused: the request was granted. */
    NONE(0),
    /** The bot's overall rate (Telegram FAQ: about 30 msg/s per bot). */
    GLOBAL(1),
    /** The chat's rate (Telegram FAQ: about 1 msg/s per chat). */
    CHAT(2),
    /** A penalty gate written after a 429: the chat is refused until the gate lifts. */
    GATE(3);

    private final int code;

    Limit(int code) {
        this.code = code;
    }

    /** The integer the Lua script returns for this limit. */
    public int code() {
        return code;
    }

    public static Limit ofCode(long code) {
        for (Limit l : values()) {
            if (l.code == code) {
                return l;
            }
        }
        throw new IllegalArgumentException("unknown limit code " + code);
    }
}
