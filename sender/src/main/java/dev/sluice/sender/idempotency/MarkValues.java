package dev.sluice.sender.idempotency;

import dev.sluice.sender.idempotency.SentMarks.Mark;
import dev.sluice.sender.idempotency.SentMarks.State;

/**
 * The text of a sent mark ({@code sluice:{<bot>}:sent:<id>}), as {@link RedisSentMarks} writes it, {@code budget.lua}
 * writes the in-flight one with a grant and returns it with ALREADY_SENT: {@code FLIGHT|||<at ms>|<result key>},
 * {@code SENT|<status>|<provider id>|<at ms>|<result key>}, {@code DONE|||<at ms>|<result key>} ({@code DONE||||<result key>} before the time
 * was kept, {@code DONE||} before the key was). Stateless.
 */
public final class MarkValues {
    private MarkValues() {
    }

    /** Reads a stored mark value (null: no mark); also what the budget returns for ALREADY_SENT. */
    public static Mark parse(String v) {
        if (v == null) {
            return Mark.NONE;
        }
        String[] parts = v.split("\\|", 5); // the result key is the rest, bars and all (as budget.lua reads it)
        State state = parts[0].equals("DONE") ? State.RESULT_WRITTEN
                : parts[0].equals("FLIGHT") ? State.IN_FLIGHT : State.SENT;
        String status = parts.length > 1 && !parts[1].isEmpty() ? parts[1] : null;
        Long id = null;
        if (parts.length > 2 && !parts[2].isEmpty()) {
            try {
                id = Long.parseLong(parts[2]);
            } catch (NumberFormatException e) {
                id = null;
            }
        }
        long at = 0;
        if (parts.length > 3 && !parts[3].isEmpty()) {
            try {
                at = Long.parseLong(parts[3]);
            } catch (NumberFormatException e) {
                at = 0;
            }
        }
        String resultKey = parts.length > 4 && !parts[4].isEmpty() ? parts[4] : null;
        return new Mark(state, status, id, at, resultKey);
    }

    /**
     * The in-flight mark's value, {@code FLIGHT|||<at ms>|<result key>}, which the budget writes with a grant (op
     * 'acquire', flag 16): the time and key a next owner looks for the result under.
     */
    public static String inFlight(long atMs, String resultKey) {
        return "FLIGHT|||" + atMs + "|" + resultKey;
    }

    static String value(String state, String status, Long providerMessageId) {
        return state + "|" + (status == null ? "" : status) + "|" + (providerMessageId == null ? "" : providerMessageId);
    }
}
