package dev.sluice.sender;

import dev.sluice.avro.DeliveryResult;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Looks for a result in the partition of {@code delivery.results} its key maps to (the producer's default
 * partitioner: murmur2 of the key), from a little before the time it could have been written to the end.
 *
 * <p><b>One scan serves a recovery.</b> Lookups come in bursts: after a kill -9 or a rebalance, every redelivered
 * message whose mark says "granted" or "sent" asks, each from about the same time. So the records a lookup reads are
 * remembered per partition (the offsets read, {@code [from, to)}, and the key and message id of every result among
 * them): a later lookup whose start falls inside that range answers from memory and reads only the records written
 * since. Without it each lookup read its partition again from its start, and the sending threads queued on this
 * class's lock for minutes after a crash of a busy sender. Bounds: a lookup reads at most {@value #MAX_RECORDS}
 * records; at most {@value #MAX_REMEMBERED} results are remembered over all partitions (a partition that would pass it
 * is forgotten, and its next lookup scans again); a partition not asked about for {@value #IDLE_FORGET_MS} ms is
 * forgotten.
 *
 * <p>Threads: any sending thread; one assigned consumer, no group; all state is guarded by this object's monitor
 * (lookups are rare: only after a crash left a mark behind).
 */
final class KafkaResultLookup implements ResultLookup {
    private static final Logger log = LoggerFactory.getLogger(KafkaResultLookup.class);
    private static final long MARGIN_MS = 10_000;
    static final int MAX_RECORDS = 200_000;
    static final int MAX_REMEMBERED = 200_000;
    static final long IDLE_FORGET_MS = 300_000;

    private final String topic;
    private final Map<String, Object> properties;
    private final Deserializer<DeliveryResult> deserializer;
    private final Clock clock;
    private final Map<Integer, Scanned> scanned = new HashMap<>();
    private KafkaConsumer<String, DeliveryResult> consumer;
    private long recordsRead;
    private int remembered;

    /** Records of one partition read by earlier lookups: offsets {@code [from, to)} and the results among them. */
    private static final class Scanned {
        final long from;
        long to;
        long usedAtMs;
        final Set<String> results = new HashSet<>();

        Scanned(long from) {
            this.from = from;
            this.to = from;
        }
    }

    KafkaResultLookup(String topic, Map<String, Object> properties, Deserializer<DeliveryResult> deserializer) {
        this(topic, properties, deserializer, Clock.systemUTC());
    }

    KafkaResultLookup(String topic, Map<String, Object> properties, Deserializer<DeliveryResult> deserializer,
                      Clock clock) {
        this.topic = topic;
        this.properties = new HashMap<>(properties);
        this.properties.remove(ConsumerConfig.GROUP_ID_CONFIG);
        this.properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        this.properties.put(ConsumerConfig.CLIENT_ID_CONFIG, properties.get(ConsumerConfig.CLIENT_ID_CONFIG) + "-lookup");
        this.deserializer = deserializer;
        this.clock = clock;
    }

    @Override
    public synchronized boolean hasResult(String resultKey, String messageId, long sinceMs) {
        if (resultKey == null) {
            return false;
        }
        try {
            if (consumer == null) {
                consumer = new KafkaConsumer<>(properties, new StringDeserializer(), deserializer);
            }
            int partitions = consumer.partitionsFor(topic).size();
            int p = Utils.toPositive(Utils.murmur2(resultKey.getBytes(StandardCharsets.UTF_8))) % partitions;
            TopicPartition tp = new TopicPartition(topic, p);
            long from = Math.max(0, sinceMs - MARGIN_MS);
            OffsetAndTimestamp start = consumer.offsetsForTimes(Map.of(tp, from)).get(tp);
            if (start == null) {
                return false; // nothing written since then
            }
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            Scanned s = remembered(p, start.offset());
            String wanted = entry(resultKey, messageId);
            if (s.results.contains(wanted)) {
                return true;
            }
            return readOn(tp, s, end, wanted);
        } catch (RuntimeException e) {
            log.warn("could not look for the result of {} ({}); writing it", messageId, e.toString());
            return false;
        }
    }

    /** Lock held. What is remembered of partition {@code p} from {@code startOffset} on: a new range if none covers it. */
    private Scanned remembered(int p, long startOffset) {
        long now = clock.millis();
        scanned.values().removeIf(s -> {
            boolean idle = now - s.usedAtMs > IDLE_FORGET_MS;
            if (idle) {
                remembered -= s.results.size();
            }
            return idle;
        });
        Scanned s = scanned.get(p);
        if (s == null || startOffset < s.from || startOffset > s.to) {
            if (s != null) {
                remembered -= s.results.size();
            }
            s = new Scanned(startOffset);
            scanned.put(p, s);
        }
        s.usedAtMs = now;
        return s;
    }

    /** Lock held. Reads {@code tp} from where {@code s} ends to {@code end}, remembering results; true when found. */
    private boolean readOn(TopicPartition tp, Scanned s, long end, String wanted) {
        consumer.assign(List.of(tp));
        consumer.seek(tp, s.to);
        boolean found = false;
        int read = 0;
        while (!found && consumer.position(tp) < end && read < MAX_RECORDS) {
            for (ConsumerRecord<String, DeliveryResult> r : consumer.poll(Duration.ofMillis(200))) {
                read++;
                if (r.value() == null || r.key() == null) {
                    continue;
                }
                String e = entry(r.key(), r.value().getMessageId().toString());
                if (s.results.add(e)) {
                    remembered++;
                }
                found |= e.equals(wanted);
            }
            s.to = consumer.position(tp);
        }
        recordsRead += read;
        if (remembered > MAX_REMEMBERED) {
            remembered -= s.results.size();
            scanned.remove(tp.partition());
        }
        return found;
    }

    private static String entry(String key, String messageId) {
        return key + '\u0000' + messageId;
    }

    /** Records read by all lookups so far (what the memory of earlier scans saves is visible here). */
    synchronized long recordsRead() {
        return recordsRead;
    }

    @Override
    public synchronized void close() {
        if (consumer != null) {
            consumer.close(org.apache.kafka.clients.consumer.CloseOptions.timeout(Duration.ofSeconds(2)));
        }
    }
}
