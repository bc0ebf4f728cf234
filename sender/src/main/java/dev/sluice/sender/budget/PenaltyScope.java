package dev.sluice.sender.budget;

/**
 * What a 429 penalty applies to (DESIGN.md, Sender outcomes). Telegram's 429 does not name the limit it
 * enforces; the sender attributes it (issue 9) and the budget turns it into a shared gate of that scope.
 */
public enum PenaltyScope {
    /** One chat is refused until the gate lifts ({@link Limit#GATE_CHAT}). */
    CHAT,
    /**
     * One group (a chat with a negative id or an {@code @channel} username) is refused until the gate lifts
     * ({@link Limit#GATE_GROUP}). The group's gate is keyed by the group's own chat id. For a chat that is
     * not a group, a GROUP penalty is applied as a CHAT penalty.
     */
    GROUP,
    /**
     * The whole bot is refused until the gate lifts ({@link Limit#GATE_BOT}) and its effective rate is
     * lowered multiplicatively (AIMD), climbing back additively afterwards.
     */
    BOT
}
