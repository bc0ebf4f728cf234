package dev.sluice.sender;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.ToIntFunction;
import org.apache.kafka.common.TopicPartition;

/**
 * Per-bot backpressure. A partition holds the chats of several bots, so pausing it for one bot's backlog would
 * stop the others too. Instead a record whose bot already has {@code sender.buffer.max.records.per.bot} messages
 * buffered is <b>deferred</b>: not buffered, its offset kept pending (never committed past, see
 * {@link OffsetTracker}) and remembered here (offset and bot, no payload), while the partition goes on being read
 * for the other bots. When the bot's backlog falls to half its bound, each partition holding deferred records of
 * it is rewound to its lowest deferred offset and read again: deferred records are buffered in offset order (per-chat
 * order holds: a chat's records are all of one partition, and once a record of a bot is deferred in a partition
 * every later record of that bot there is deferred too, until the earlier ones were buffered); the records read
 * before that were buffered or finished already and are passed over.
 *
 * <p>Memory: at most {@code sender.deferred.max.records} offsets are remembered (each costs about a tenth of a
 * buffered record). At that cap the partitions holding deferred records are paused until a rewind reads them
 * again: only then may one bot's backlog hold back the others on the same partitions.
 *
 * <p>Thread: only the sender's poll thread (it owns the consumer and calls this while enqueueing).
 */
final class DeferredRecords {
    private final int perBotMax;
    private final int maxTracked;
    /** Per partition and bot: the offsets deferred. */
    private final Map<TopicPartition, Map<String, TreeSet<Long>>> deferred = new HashMap<>();
    private final Map<String, Integer> countByBot = new HashMap<>();
    /** Per partition: the offset after the highest record seen; records below it were handled once already. */
    private final Map<TopicPartition, Long> readUpTo = new HashMap<>();
    /** Partitions rewound and still reading again, up to (excluding) this offset. */
    private final Map<TopicPartition, Long> rereadingUntil = new HashMap<>();
    private int total;

    DeferredRecords(int perBotMax, int maxTracked) {
        if (perBotMax < 1 || maxTracked < 1) {
            throw new IllegalArgumentException("bounds must be positive: " + perBotMax + ", " + maxTracked);
        }
        this.perBotMax = perBotMax;
        this.maxTracked = maxTracked;
    }

    /**
     * True for a record read again after a rewind that was buffered or finished the first time: pass over it
     * without touching its offset's state. {@code bot} is null for a tombstone.
     */
    boolean handledBefore(TopicPartition tp, long offset, String bot) {
        Long until = rereadingUntil.get(tp);
        if (until != null && offset + 1 >= until) {
            rereadingUntil.remove(tp);
        }
        if (offset >= readUpTo.getOrDefault(tp, 0L)) {
            return false;
        }
        TreeSet<Long> offsets = bot == null ? null : offsetsOf(tp, bot);
        return offsets == null || !offsets.contains(offset);
    }

    /**
     * A record of {@code bot} that was not {@link #handledBefore}: true to buffer it now; false when it is deferred
     * (its bot has {@code backlogOfBot} buffered, at the bound, or an earlier record of the bot in this partition
     * is still deferred).
     */
    boolean admit(TopicPartition tp, long offset, String bot, int backlogOfBot) {
        readUpTo.merge(tp, offset + 1, Math::max);
        TreeSet<Long> offsets = offsetsOf(tp, bot);
        boolean known = offsets != null && offsets.contains(offset);
        boolean earlierDeferred = offsets != null && offsets.lower(offset) != null;
        if (backlogOfBot < perBotMax && !earlierDeferred) {
            if (known) {
                offsets.remove(offset);
                countByBot.merge(bot, -1, DeferredRecords::decrement);
                total--;
                if (offsets.isEmpty()) {
                    Map<String, TreeSet<Long>> bots = deferred.get(tp);
                    bots.remove(bot);
                    if (bots.isEmpty()) {
                        deferred.remove(tp);
                    }
                }
            }
            return true;
        }
        if (!known) {
            deferred.computeIfAbsent(tp, k -> new HashMap<>()).computeIfAbsent(bot, b -> new TreeSet<>()).add(offset);
            countByBot.merge(bot, 1, Integer::sum);
            total++;
        }
        return false;
    }

    private TreeSet<Long> offsetsOf(TopicPartition tp, String bot) {
        Map<String, TreeSet<Long>> bots = deferred.get(tp);
        return bots == null ? null : bots.get(bot);
    }

    /** A record handled without being buffered (dead-lettered): a rewind reads past it as handled. */
    void seen(TopicPartition tp, long offset) {
        readUpTo.merge(tp, offset + 1, Math::max);
    }

    /** Deferred records remembered now. */
    int size() {
        return total;
    }

    /** Deferred records of one bot. */
    int deferred(String bot) {
        return countByBot.getOrDefault(bot, 0);
    }

    /** At the cap: partitions holding deferred records and not being read again should pause. */
    Set<TopicPartition> toPause() {
        Set<TopicPartition> out = new HashSet<>();
        if (total >= maxTracked) {
            for (TopicPartition tp : deferred.keySet()) {
                if (!rereadingUntil.containsKey(tp)) {
                    out.add(tp);
                }
            }
        }
        return out;
    }

    /**
     * The partitions to read again now, with the offset to seek to: each partition (not already being read again)
     * holding deferred records of a bot whose backlog ({@code backlog}) fell to half its bound, at the lowest
     * deferred offset of such bots.
     */
    Map<TopicPartition, Long> rewinds(ToIntFunction<String> backlog) {
        Map<TopicPartition, Long> out = new HashMap<>();
        if (total == 0) {
            return out;
        }
        Set<String> ready = new HashSet<>();
        countByBot.keySet().forEach(bot -> {
            if (backlog.applyAsInt(bot) <= perBotMax / 2) {
                ready.add(bot);
            }
        });
        if (ready.isEmpty()) {
            return out;
        }
        deferred.forEach((tp, bots) -> {
            if (rereadingUntil.containsKey(tp)) {
                return;
            }
            long from = Long.MAX_VALUE;
            for (String bot : ready) {
                TreeSet<Long> offsets = bots.get(bot);
                if (offsets != null) {
                    from = Math.min(from, offsets.first());
                }
            }
            if (from != Long.MAX_VALUE) {
                out.put(tp, from);
                rereadingUntil.put(tp, readUpTo.getOrDefault(tp, from + 1));
            }
        });
        return out;
    }

    private static Integer decrement(int a, int b) {
        return a + b <= 0 ? null : a + b;
    }

    /** Revoked or lost partitions: their records are the next owner's (never committed past). */
    void forget(Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            Map<String, TreeSet<Long>> bots = deferred.remove(tp);
            if (bots != null) {
                bots.forEach((bot, offsets) -> {
                    countByBot.merge(bot, -offsets.size(), DeferredRecords::decrement);
                    total -= offsets.size();
                });
            }
            readUpTo.remove(tp);
            rereadingUntil.remove(tp);
        }
    }
}
