package dev.sluice.sender.budget;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The keys and arguments of one {@code acquire} call of {@code budget.lua}, as {@link RedisGcraBudget} makes it for a
 * batch of one bot's requests (the reply is read by {@link BudgetReply}).
 *
 * <p><b>Cost of a decision</b>: the keys and arguments are byte arrays, encoded once per bot ({@link #botArgs}: key
 * prefixes, limits) or taken from constants (flags), so a call builds only the chat keys.
 *
 * <p>Keys, in order: the bot's state key; the sent-mark keys of the pending mark writes the call carries; per request
 * its chat key, its group key (a group), its sent-mark key (when the script reads or writes it); then the arrivals key
 * (with the arrival guard), the critical key and the probe key (each only where the script reads it). Arguments: the
 * bot's 16 fixed ones (the reservation horizon set per call), the number of mark writes and their
 * TTL, the marks' values, then per request its flags and, for an in-flight mark, the mark's value.
 *
 * <p>Immutable; built and read by the calling thread. The bot's {@link BotArgs} are shared (see there).
 */
final class AcquireCall {
    private static final int FIXED_ARGS = 16;
    /** Index of the reservation horizon among the fixed arguments (ARGV[11]). */
    private static final int HORIZON_ARG = 10;
    /** The candidate flags 0..127 as arguments, encoded once. */
    private static final byte[][] FLAG_ARGS = new byte[128][];
    private static final byte[] ZERO = ascii("0");

    static {
        for (int f = 0; f < FLAG_ARGS.length; f++) {
            FLAG_ARGS[f] = ascii(Integer.toString(f));
        }
    }

    final byte[][] keys;
    final byte[][] args;
    /** Whether the arrival guard is on: the reply carries a grant sequence per request. */
    final boolean guard;

    private AcquireCall(byte[][] keys, byte[][] args, boolean guard) {
        this.keys = keys;
        this.args = args;
        this.guard = guard;
    }

    /**
     * The call deciding {@code requests} (all of {@code botId}) and carrying the mark writes {@code marks}.
     *
     * @param pending the sent-mark writes waiting for a budget call (their TTL); null: none are folded, and no
     *                in-flight mark is written
     * @throws IllegalArgumentException if a request is of another bot
     */
    static AcquireCall of(String botId, BotArgs bot, List<BudgetRequest> requests,
                          Map<String, List<MarkWrites.Write>> marks, MarkWrites pending, BudgetConfig config) {
        int n = requests.size();
        int p = 0;
        for (List<MarkWrites.Write> w : marks.values()) {
            p += w.size();
        }
        List<byte[]> args = new ArrayList<>(FIXED_ARGS + 2 + p + 2 * n);
        args.addAll(Arrays.asList(bot.fixed));
        args.add(p == 0 ? ZERO : ascii(Integer.toString(p)));
        args.add(pending == null ? ZERO : ascii(Long.toString(pending.ttlMs()))); // ARGV[18]: the marks' TTL
        List<byte[]> keys = new ArrayList<>(2 + p + 3 * n);
        keys.add(bot.botKey);
        for (Map.Entry<String, List<MarkWrites.Write>> e : marks.entrySet()) {
            // another bot's marks: same node, or same cluster slot (MarkWrites' call groups, set by foldMarkWrites)
            byte[] prefix = e.getKey().equals(botId) ? bot.sentPrefix : utf8(BudgetKeys.tag(e.getKey()) + BudgetKeys.SENT);
            for (MarkWrites.Write w : e.getValue()) {
                keys.add(concat(prefix, utf8(w.messageId())));
                args.add(utf8(w.value()));
            }
        }
        long horizonMicros = 0;
        for (BudgetRequest r : requests) {
            if (!r.botId().equals(botId)) {
                throw new IllegalArgumentException("request for bot " + r.botId() + " in a batch of bot " + botId);
            }
            boolean group = r.isGroup();
            byte[] chatId = utf8(r.chatId());
            keys.add(concat(bot.chatPrefix, chatId));
            if (group) {
                keys.add(concat(bot.groupPrefix, chatId));
            }
            boolean flight = r.inFlight() != null && pending != null; // written only where the marks' TTL is known
            if (r.markId() != null && (r.sentMarkId() != null || flight)) {
                keys.add(concat(bot.sentPrefix, utf8(r.markId())));
            }
            boolean reserve = !r.reserveUpTo().isZero();
            int flags = (r.lane() == dev.sluice.avro.Lane.BACKFILL ? 1 : 0) | (group ? 2 : 0)
                    | (r.sentMarkId() != null ? 4 : 0) | (reserve ? 8 : 0) | (flight ? 16 : 0) | (r.urgent() ? 32 : 0)
                    | (flight && r.inFlight().exclusive() ? 64 : 0);
            if (reserve) {
                horizonMicros = Math.max(horizonMicros, r.reserveUpTo().toNanos() / 1000);
            }
            args.add(FLAG_ARGS[flags]);
            if (flight) {
                args.add(utf8(r.inFlight().value()));
                if (r.inFlight().exclusive()) {
                    args.add(ascii(Long.toString(r.inFlight().settledFromMs())));
                }
            }
        }
        boolean guard = config.arrivalGuardLimitPerS() > 0;
        if (guard) {
            keys.add(bot.arrivalsKey); // the arrivals key goes last, but for the critical and probe keys
        }
        if (bot.criticalKey != null) {
            keys.add(bot.criticalKey);
        }
        if (bot.probeKey != null) {
            keys.add(bot.probeKey); // the very last: the script reads it only in the second after a bot gate lifted
        }
        args.set(HORIZON_ARG, horizonMicros == 0 ? ZERO : ascii(Long.toString(horizonMicros)));
        return new AcquireCall(keys.toArray(new byte[0][]), args.toArray(new byte[0][]), guard);
    }

    /** The bot's key prefixes and fixed acquire arguments under {@code config}, encoded once per bot. */
    static BotArgs botArgs(String botId, BudgetConfig config) {
        String tag = BudgetKeys.tag(botId);
        BudgetLimits l = config.limitsFor(botId);
        long headroomPpm = config.backfillHeadroomPpm();
        // the group GCRA with budget.group.arrival.margin.ms, as LocalGcraBudget decides it
        long groupInterval = l.groupIntervalMicros(config.groupArrivalMargin().toMillis());
        long backfillBurst = Math.max(1, (long) Math.floor(l.globalBurst() * (1_000_000 - headroomPpm) / 1e6));
        String[] fixed = {"acquire",
                Long.toString(l.globalIntervalMicros()), Integer.toString(l.globalBurst()),
                Long.toString(l.chatIntervalMicros()), Long.toString(l.chatToleranceMicros()),
                Long.toString(groupInterval), Long.toString((l.groupBurst() - 1L) * groupInterval),
                Long.toString(headroomPpm), Long.toString(backfillBurst),
                Long.toString(RedisGcraBudget.aimdIncreasePpm(config)), "0",
                Integer.toString(config.arrivalGuardLimitFor(botId)), Long.toString(RedisGcraBudget.GUARD_WINDOW_MICROS),
                config.reservationRoutineMaxSet() ? Long.toString(config.reservationRoutineMax().toNanos() / 1000) : "-1",
                Long.toString(micros(config.reservationCriticalMemory())),
                Long.toString(micros(config.penaltyProbeWindow()))};
        byte[][] encoded = new byte[FIXED_ARGS][];
        for (int i = 0; i < FIXED_ARGS; i++) {
            encoded[i] = ascii(fixed[i]);
        }
        return new BotArgs(utf8(tag + BudgetKeys.BOT_STATE), utf8(tag + BudgetKeys.CHAT), utf8(tag + BudgetKeys.GROUP),
                utf8(tag + BudgetKeys.SENT), utf8(tag + BudgetKeys.ARRIVALS),
                // each key only where the script reads it: an argument > 0 in whole microseconds (as sent above)
                micros(config.reservationCriticalMemory()) > 0 ? utf8(tag + BudgetKeys.CRITICAL) : null,
                micros(config.penaltyProbeWindow()) > 0 ? utf8(tag + BudgetKeys.PROBE) : null, encoded);
    }

    private static long micros(java.time.Duration d) {
        return d.toNanos() / 1000;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
