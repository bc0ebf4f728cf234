package dev.sluice.topology;

import dev.sluice.avro.SenderStatus;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pressure of a bot (DESIGN.md, Topology step 5a), read from the global store
 * {@value SluiceTopology#SENDER_STATUS_STORE} (a copy of the compacted {@code sender.status}, key
 * {@code <bot_id>/<instance_id>}). Drain time = Σ backlog / Σ drain_rate_per_s over the reports of the bot
 * that are at most {@code pressure.status.max.age.ms} old; the bot is under pressure when it exceeds
 * {@code pressure.drain.time.threshold.ms}. A backlog with no drain at all counts as infinite drain time.
 * Unreadable reports are skipped.
 *
 * <p>The decoded reports of a bot are kept until its entries in the store change ({@link StoreChanges}, told by the global
 * thread), so a routine notification does not scan the store and decode Avro each time (issue 21); the age rule is applied
 * to the kept reports at each call, so a report still ages out without a change. One instance per processor, used by its
 * task's stream thread only.
 */
final class BotPressure {
    private static final Logger log = LoggerFactory.getLogger(BotPressure.class);
    private static final StringSerializer KEYS = new StringSerializer();
    /** Bots whose reports are kept; past it the cache starts over (bots seen by one task, normally far fewer). */
    static final int MAX_CACHED_BOTS = 10_000;
    private final ReadOnlyKeyValueStore<String, byte[]> store;
    private final Deserializer<SenderStatus> deserializer;
    private final String topic;
    private final long thresholdMs;
    private final long maxAgeMs;
    private final StoreChanges changes;
    private final Map<String, Reports> cache = new HashMap<>();

    /** The fresh-or-not reports of one bot as read at {@code version}: at (ms), backlog and drain rate, side by side. */
    private record Reports(long version, long[] atMs, long[] backlog, double[] ratePerS) {
    }

    BotPressure(ReadOnlyKeyValueStore<String, byte[]> store, Deserializer<SenderStatus> deserializer, String topic,
                long thresholdMs, long maxAgeMs, StoreChanges changes) {
        this.store = store;
        this.deserializer = deserializer;
        this.topic = topic;
        this.thresholdMs = thresholdMs;
        this.maxAgeMs = maxAgeMs;
        this.changes = changes;
    }

    /** Drain time of the bot in ms (0 without fresh reports, {@link Long#MAX_VALUE} for a backlog that does not drain). */
    long drainTimeMs(String botId, long nowMs) {
        Reports reports = reports(botId);
        long backlog = 0;
        double rate = 0;
        for (int i = 0; i < reports.atMs().length; i++) {
            if (nowMs - reports.atMs()[i] > maxAgeMs) {
                continue;
            }
            backlog += reports.backlog()[i];
            rate += reports.ratePerS()[i];
        }
        if (backlog == 0) {
            return 0;
        }
        if (rate <= 0) {
            return Long.MAX_VALUE;
        }
        double ms = backlog / rate * 1000.0;
        return ms >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) Math.ceil(ms);
    }

    boolean underPressure(String botId, long nowMs) {
        return drainTimeMs(botId, nowMs) > thresholdMs;
    }

    private Reports reports(String botId) {
        long version = changes.version(botId); // before the read: a change during it bumps the version past this one
        Reports kept = cache.get(botId);
        if (kept != null && kept.version() == version) {
            return kept;
        }
        List<SenderStatus> read = new ArrayList<>();
        try (KeyValueIterator<String, byte[]> it = store.prefixScan(botId + "/", KEYS)) {
            while (it.hasNext()) {
                KeyValue<String, byte[]> kv = it.next();
                SenderStatus s;
                try {
                    s = deserializer.deserialize(topic, kv.value);
                } catch (RuntimeException e) {
                    log.debug("skipping unreadable sender.status entry {}: {}", kv.key, e.getMessage());
                    continue;
                }
                if (botId.equals(s.getBotId())) {
                    read.add(s);
                }
            }
        }
        Reports r = new Reports(version, new long[read.size()], new long[read.size()], new double[read.size()]);
        for (int i = 0; i < read.size(); i++) {
            r.atMs()[i] = read.get(i).getAt().toEpochMilli();
            r.backlog()[i] = Math.max(0, read.get(i).getBacklog());
            r.ratePerS()[i] = Math.max(0, read.get(i).getDrainRatePerS());
        }
        if (cache.size() >= MAX_CACHED_BOTS) {
            cache.clear();
        }
        cache.put(botId, r);
        return r;
    }
}
