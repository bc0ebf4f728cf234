package dev.sluice.sender.budget;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Sent-mark writes ({@code sluice:{bot}:sent:<id>}, see {@code RedisSentMarks}) waiting to ride on the next budget call
 * of their bot (issue 19: no Redis round trip of their own). {@link RedisGcraBudget} takes a bot's pending writes into
 * the {@code budget.lua} 'acquire' call it is making for that bot anyway ({@link #drain}), so they are written in the
 * same script call, under the same hash tag (Redis Cluster safe); what no budget call carried within
 * {@code sender.sent.mark.flush.interval.ms} is written by {@code RedisSentMarks}' flush, one script call (op 'marks')
 * per bot.
 *
 * <p>Only writes that may be late go here: the SENT mark of a message whose grant wrote its in-flight mark (until it is
 * written, a next owner finds FLIGHT and looks for the result before sending) and the DONE mark (its loss or delay
 * costs at most that lookup).
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

    /** One pending write: the message id (its key is {@code sluice:{bot}:sent:<id>}) and the value to SET. */
    public record Write(String messageId, String value) {
    }

    private final int capacity;
    private final long ttlMs;
    private final Map<String, LinkedHashMap<String, String>> byBot = new LinkedHashMap<>();
    /** Per bot with pending writes: when (System.nanoTime) its oldest pending write was queued. */
    private final Map<String, Long> since = new java.util.HashMap<>();
    private int size;

    /**
     * @param capacity the most writes waiting at once (&ge; 1)
     * @param ttlMs    the PX TTL every mark is written with ({@code sender.sent.mark.ttl.ms})
     */
    public MarkWrites(int capacity, long ttlMs) {
        if (capacity < 1 || ttlMs < 1) {
            throw new IllegalArgumentException("capacity and ttlMs must be positive, got " + capacity + ", " + ttlMs);
        }
        this.capacity = capacity;
        this.ttlMs = ttlMs;
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
        LinkedHashMap<String, String> bot = byBot.get(botId);
        if (bot != null && bot.containsKey(messageId)) {
            bot.put(messageId, value);
            return true;
        }
        if (size >= capacity) {
            return false;
        }
        queue(botId).put(messageId, value);
        size++;
        return true;
    }

    /** Takes up to {@code max} of the bot's pending writes, oldest first (they are no longer pending). */
    public synchronized List<Write> drain(String botId, int max) {
        LinkedHashMap<String, String> bot = byBot.get(botId);
        if (bot == null) {
            return List.of();
        }
        List<Write> out = new ArrayList<>(Math.min(max, bot.size()));
        Iterator<Map.Entry<String, String>> it = bot.entrySet().iterator();
        while (it.hasNext() && out.size() < max) {
            Map.Entry<String, String> e = it.next();
            out.add(new Write(e.getKey(), e.getValue()));
            it.remove();
        }
        size -= out.size();
        if (bot.isEmpty()) {
            byBot.remove(botId);
            since.remove(botId);
        } else {
            since.put(botId, System.nanoTime()); // what is left waits anew for a call
        }
        return out;
    }

    private LinkedHashMap<String, String> queue(String botId) {
        return byBot.computeIfAbsent(botId, b -> {
            since.put(b, System.nanoTime());
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
            LinkedHashMap<String, String> bot = byBot.get(botId);
            if (bot != null && bot.containsKey(w.messageId())) {
                continue; // a newer value waits
            }
            if (size >= capacity) {
                dropped++;
                continue;
            }
            queue(botId).put(w.messageId(), w.value());
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
