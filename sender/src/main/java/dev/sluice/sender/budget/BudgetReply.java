package dev.sluice.sender.budget;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the reply of {@code budget.lua}'s {@code acquire} for a batch of requests of one bot (the encoding side is
 * {@link AcquireCall}): item 0 the bot's AIMD multiplier (ppm, not used here), then one item per request — the
 * sent mark's value itself when the message was sent before (ALREADY_SENT), else {@code wait_ms * 16 + code} — then,
 * with the arrival guard, one grant sequence per request; last, 1 or 0: whether the bot's routine requests were held to
 * the routine horizon (read by {@link RedisGcraBudget} into {@code BotArgs.routineShort}, not here). A refusal with code
 * 6 (GATE_BOT) is the bot's penalty gate, or the penalty probe's window after it (see {@code budget.lua}).
 *
 * <p>Stateless.
 */
final class BudgetReply {
    private BudgetReply() {
    }

    /**
     * @param guard         whether the arrival guard is on (the reply carries grant sequences)
     * @param marksTtlKnown whether in-flight marks could be written by this call (the marks' TTL was passed)
     */
    static List<Decision> decisions(List<Object> reply, List<BudgetRequest> requests, boolean guard,
                                    boolean marksTtlKnown) {
        int n = requests.size();
        List<Decision> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Object item = reply.get(1 + i);
            BudgetRequest r = requests.get(i);
            if (item instanceof byte[] mark) {
                out.add(Decision.alreadySent(new String(mark, StandardCharsets.UTF_8)));
                continue;
            }
            long packed = (Long) item;
            long code = packed & 15;
            long ms = packed >>> 4;
            Decision d = code != 0 ? Decision.refused(ms, Limit.ofCode(code)) : ms == 0 ? Decision.grant()
                    : Decision.reserved(ms);
            if (r.sentMarkId() != null) {
                d = d.withSentMarkChecked();
            }
            if (guard && d.granted()) {
                d = d.withGrantSeq((Long) reply.get(1 + n + i));
            }
            if (d.granted() && r.inFlight() != null && marksTtlKnown) {
                d = d.withInFlightMarked();
            }
            out.add(d);
        }
        return out;
    }
}
