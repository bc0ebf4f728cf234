package dev.sluice.sender.budget;

import io.lettuce.core.cluster.SlotHash;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Sent-mark writes ({@code sluice:{bot}:sent:<id>}, see {@code RedisSentMarks}) waiting to ride on the next budget call
 * that may carry them (issue 19: no Redis round trip of their own). {@link RedisGcraBudget} takes pending writes into
 * the {@code budget.lua} 'acquire' call it is making anyway ({@link #drainForCall}), so they are written in the same
 * script call; what no budget call carried within {@code sender.sent.mark.flush.interval.ms} is written by
 * {@code RedisSentMarks}' flush, one script call (op 'marks') per {@link #MAX_PER_CALL} writes of one call group.
 *
 * <p><b>Call groups</b> (session 11): which bots' writes may share one script call. By default each bot is its own
 * group (a bot's writes ride only on its own calls, one hash tag per call). The budget widens them from its Redis
 * topology: on one node (standalone, Sentinel: {@link #shareAcrossBots}) keys of different hash tags may share a call,
 * so any bot's call carries any bot's writes (its own first) and the flush needs one call per {@link #MAX_PER_CALL}
 * writes; on a Redis Cluster ({@link #shareBySlot}) a script's keys must share one slot, so a call carries the writes
 * of the bots whose hash tag hashes to the slot of its own keys, and the flush makes one call per slot.
 *
 * <p>Only writes that may be late go here: the SENT mark of a message whose grant wrote its in-flight mark (until it is
 * written, a next owner finds FLIGHT and looks for the result before sending) and the DONE mark (its loss or delay
 * costs at most that lookup).
 *
 * <p><b>Held writes</b> ({@link #offerHeld}, the SENT marks): a budget call carries one only once it waited
 * {@link #holdNanos()}, so the DONE of the same message (offered when Kafka acknowledged its result, usually within
 * milliseconds) replaces it first and only the DONE is written: one SET per message instead of two. The timed flush
 * writes a held mark that waited the flush interval like any other; {@link #drainAll} (a flush by hand, the flush at
 * close) takes it at once. A sender killed while a SENT is held leaves FLIGHT, as a SENT not yet carried did before:
 * the next owner looks for the result on the results topic and sends only when there is none, which is a message
 * the killed sender had in flight (provider called, result not yet written).
 *
 * <p><b>Bounded</b> on purpose: at most {@link #capacity()} writes wait (coalesced per message: a later value of the
 * same mark replaces the earlier one). When it is full, {@link #offer} refuses and the caller writes the mark by
 * itself, as without folding (one command), so a Redis outage or a slow flush never grows the heap without bound.
 *
 * <p>Thread-safe: every method holds this object's monitor (short critical sections, no I/O). Sending threads and
 * the producer's callback thread offer; budget callers and the flush thread drain.
 */
public final class MarkWrites {
    /** The most writes one budget call carries (the script runs one SET per write): bounds a call's duration. */
    public static final int MAX_PER_CALL = 64;

    /**
     * How long a held write (a SENT mark) waits for a newer value (its DONE) before a budget call carries it, unless
     * the flush interval is shorter: a Kafka acknowledgement normally takes a few ms (linger.ms 5).
     */
    public static final java.time.Duration SENT_HOLD = java.time.Duration.ofMillis(50);

    /** One pending write: the message id (its key is {@code sluice:{bot}:sent:<id>}) and the value to SET. */
    public record Write(String messageId, String value) {
    }

    /** A waiting value, when (System.nanoTime) the first value of its mark was queued, and whether it is held. */
    private record Pending(String value, long queuedAt, boolean held) {
    }

    private final int capacity;
    private final long ttlMs;
    private final long holdNanos;
    private final Map<String, LinkedHashMap<String, Pending>> byBot = new LinkedHashMap<>();
    /** Per bot with pending writes: when (System.nanoTime) its oldest pending write was queued. */
    private final Map<String, Long> since = new HashMap<>();
    /** The bots with pending writes, by call group, oldest queue first. */
    private final Map<Object, LinkedHashSet<String>> botsByGroup = new HashMap<>();
    /** A bot's call group (see the class comment); by default the bot itself. */
    private Function<String, Object> groupOf = bot -> bot;
    private int size;

    /** The one call group of a single Redis node. */
    private static final Object ONE_NODE = new Object();

    /**
     * @param capacity the most writes waiting at once (&ge; 1)
     * @param ttlMs    the PX TTL every mark is written with ({@code sender.sent.mark.ttl.ms})
     */
    public MarkWrites(int capacity, long ttlMs) {
        this(capacity, ttlMs, SENT_HOLD);
    }

    /**
     * @param hold how long a held write waits for a newer value before a budget call carries it ({@link #offerHeld})
     */
    public MarkWrites(int capacity, long ttlMs, java.time.Duration hold) {
        if (capacity < 1 || ttlMs < 1 || hold.isNegative()) {
            throw new IllegalArgumentException("capacity and ttlMs must be positive and hold not negative, got "
                    + capacity + ", " + ttlMs + ", " + hold);
        }
        this.capacity = capacity;
        this.ttlMs = ttlMs;
        this.holdNanos = hold.toNanos();
    }

    /** One Redis node (standalone or Sentinel): any bot's call may carry any bot's writes. */
    public void shareAcrossBots() {
        groupBy(bot -> ONE_NODE);
    }

    /**
     * A Redis Cluster: a call may carry the writes of the bots whose keys ({@code sluice:{bot}:...}) hash to the same
     * slot as its own.
     */
    public void shareBySlot() {
        groupBy(bot -> SlotHash.getSlot(BudgetKeys.tag(bot)));
    }

    private synchronized void groupBy(Function<String, Object> group) {
        groupOf = group;
        botsByGroup.clear();
        for (String bot : byBot.keySet()) {
            botsByGroup.computeIfAbsent(group.apply(bot), g -> new LinkedHashSet<>()).add(bot);
        }
    }

    public long holdNanos() {
        return holdNanos;
    }

    public int capacity() {
        return capacity;
    }

    public long ttlMs() {
        return ttlMs;
    }

    /**
     * Queues {@code value} for the mark of {@code messageId} (replacing a value still waiting for it).
     *
     * @return false when the buffer is full: nothing was queued, the caller writes the mark itself
     */
    public synchronized boolean offer(String botId, String messageId, String value) {
        return put(botId, messageId, value, false);
    }

    /**
     * As {@link #offer}, for a value that a newer one (the DONE of the same message) may replace: a budget call carries
     * it only once it waited {@link #holdNanos()} (see the class comment).
     */
    public synchronized boolean offerHeld(String botId, String messageId, String value) {
        return put(botId, messageId, value, true);
    }

    private boolean put(String botId, String messageId, String value, boolean held) {
        LinkedHashMap<String, Pending> bot = byBot.get(botId);
        Pending old = bot == null ? null : bot.get(messageId);
        if (old != null) {
            bot.put(messageId, new Pending(value, old.queuedAt(), held)); // replaced: only the latest value is written
            return true;
        }
        if (size >= capacity) {
            return false;
        }
        queue(botId).put(messageId, new Pending(value, System.nanoTime(), held));
        size++;
        return true;
    }

    /**
     * Takes up to {@code max} of the bot's pending writes, oldest first (they are no longer pending), but a held write
     * younger than {@link #holdNanos()}: what a budget call carries.
     */
    public synchronized List<Write> drain(String botId, int max) {
        return take(botId, max, false);
    }

    /**
     * What one budget call of {@code botId} carries: up to {@code max} pending writes of its call group (see the class
     * comment), the bot's own first, then the other bots' oldest queue first; a held write younger than
     * {@link #holdNanos()} stays. Taken writes are no longer pending.
     *
     * @return the writes by bot (iteration order: the bot's own first); empty when none
     */
    public synchronized Map<String, List<Write>> drainForCall(String botId, int max) {
        return takeGroup(groupOf.apply(botId), botId, max, false);
    }

    /**
     * As {@link #drainForCall}, for a call of the flush: up to {@code max} writes of one call group ({@link #groups}),
     * held ones included when {@code all} (a flush by hand, at close).
     */
    public synchronized Map<String, List<Write>> drainGroup(Object group, int max, boolean all) {
        return takeGroup(group, null, max, all);
    }

    private Map<String, List<Write>> takeGroup(Object group, String first, int max, boolean all) {
        Map<String, List<Write>> out = new LinkedHashMap<>();
        int left = max;
        if (first != null) {
            List<Write> own = take(first, left, all);
            if (!own.isEmpty()) {
                out.put(first, own);
                left -= own.size();
            }
        }
        LinkedHashSet<String> bots = botsByGroup.get(group);
        if (bots != null && left > 0) {
            for (String bot : new ArrayList<>(bots)) {
                if (left == 0) {
                    break;
                }
                if (!bot.equals(first)) {
                    List<Write> taken = take(bot, left, all);
                    if (!taken.isEmpty()) {
                        out.put(bot, taken);
                        left -= taken.size();
                    }
                }
            }
        }
        return out;
    }

    /**
     * The call groups with a bot whose pending writes waited at least {@code ageNanos}: what the timed flush writes
     * (every write of such a group, as one call carries them anyway), so busy bots' marks keep riding on their calls.
     */
    public synchronized List<Object> groupsWaitingAtLeast(long ageNanos) {
        long now = System.nanoTime();
        LinkedHashSet<Object> out = new LinkedHashSet<>();
        since.forEach((bot, at) -> {
            if (now - at >= ageNanos) {
                out.add(groupOf.apply(bot));
            }
        });
        return new ArrayList<>(out);
    }

    /** Takes up to {@code max} of the bot's pending writes, held ones included (a flush by hand, at close). */
    public synchronized List<Write> drainAll(String botId, int max) {
        return take(botId, max, true);
    }

    private List<Write> take(String botId, int max, boolean all) {
        LinkedHashMap<String, Pending> bot = byBot.get(botId);
        if (bot == null) {
            return List.of();
        }
        long heldBefore = System.nanoTime() - holdNanos;
        List<Write> out = new ArrayList<>(Math.min(max, bot.size()));
        boolean left = false;
        long oldestLeft = 0;
        Iterator<Map.Entry<String, Pending>> it = bot.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<String, Pending> e = it.next();
            Pending w = e.getValue();
            if (out.size() < max && (all || !w.held() || w.queuedAt() - heldBefore <= 0)) {
                out.add(new Write(e.getKey(), w.value()));
                it.remove();
            } else if (!left || w.queuedAt() - oldestLeft < 0) {
                left = true;
                oldestLeft = w.queuedAt();
            }
        }
        size -= out.size();
        if (bot.isEmpty()) {
            byBot.remove(botId);
            since.remove(botId);
            Object group = groupOf.apply(botId);
            LinkedHashSet<String> bots = botsByGroup.get(group);
            if (bots != null && bots.remove(botId) && bots.isEmpty()) {
                botsByGroup.remove(group);
            }
        } else if (!out.isEmpty()) {
            since.put(botId, oldestLeft); // the oldest write left: the timed flush takes it after the interval
        }
        return out;
    }

    private LinkedHashMap<String, Pending> queue(String botId) {
        return byBot.computeIfAbsent(botId, b -> {
            since.put(b, System.nanoTime());
            botsByGroup.computeIfAbsent(groupOf.apply(b), g -> new LinkedHashSet<>()).add(b);
            return new LinkedHashMap<>();
        });
    }

    /**
     * Puts back writes whose call failed, unless a newer value for the same mark was queued meanwhile or the buffer
     * is full.
     *
     * @return how many were dropped because the buffer was full
     */
    public synchronized int restore(String botId, List<Write> writes) {
        int dropped = 0;
        for (Write w : writes) {
            LinkedHashMap<String, Pending> bot = byBot.get(botId);
            if (bot != null && bot.containsKey(w.messageId())) {
                continue; // a newer value waits
            }
            if (size >= capacity) {
                dropped++;
                continue;
            }
            queue(botId).put(w.messageId(), new Pending(w.value(), System.nanoTime(), false));
            size++;
        }
        return dropped;
    }

    /** The bots with pending writes. */
    public synchronized List<String> bots() {
        return new ArrayList<>(byBot.keySet());
    }

    /**
     * The bots whose pending writes have waited at least {@code ageNanos} (no budget call of theirs carried them
     * meanwhile): what the timed flush writes, so a busy bot's marks keep riding on its calls.
     */
    public synchronized List<String> botsWaitingAtLeast(long ageNanos) {
        long now = System.nanoTime();
        List<String> out = new ArrayList<>();
        since.forEach((bot, at) -> {
            if (now - at >= ageNanos) {
                out.add(bot);
            }
        });
        return out;
    }

    /** Writes waiting. */
    public synchronized int size() {
        return size;
    }
}
