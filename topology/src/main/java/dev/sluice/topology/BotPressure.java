package dev.sluice.topology;

import dev.sluice.avro.SenderStatus;
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
 */
final class BotPressure {
    private static final Logger log = LoggerFactory.getLogger(BotPressure.class);
    private final ReadOnlyKeyValueStore<String, byte[]> store;
    private final Deserializer<SenderStatus> deserializer;
    private final String topic;
    private final long thresholdMs;
    private final long maxAgeMs;

    BotPressure(ReadOnlyKeyValueStore<String, byte[]> store, Deserializer<SenderStatus> deserializer, String topic,
                long thresholdMs, long maxAgeMs) {
        this.store = store;
        this.deserializer = deserializer;
        this.topic = topic;
        this.thresholdMs = thresholdMs;
        this.maxAgeMs = maxAgeMs;
    }

    /** Drain time of the bot in ms (0 without fresh reports, {@link Long#MAX_VALUE} for a backlog that does not drain). */
    long drainTimeMs(String botId, long nowMs) {
        long backlog = 0;
        double rate = 0;
        try (KeyValueIterator<String, byte[]> it = store.prefixScan(botId + "/", new StringSerializer())) {
            while (it.hasNext()) {
                KeyValue<String, byte[]> kv = it.next();
                SenderStatus s;
                try {
                    s = deserializer.deserialize(topic, kv.value);
                } catch (RuntimeException e) {
                    log.debug("skipping unreadable sender.status entry {}: {}", kv.key, e.getMessage());
                    continue;
                }
                if (!botId.equals(s.getBotId()) || nowMs - s.getAt().toEpochMilli() > maxAgeMs) {
                    continue;
                }
                backlog += Math.max(0, s.getBacklog());
                rate += Math.max(0, s.getDrainRatePerS());
            }
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
}
