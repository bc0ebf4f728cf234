package dev.sluice.topology;

import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Lane;
import dev.sluice.avro.NotificationClass;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Thread-safe in-memory {@link TopologyCounters}: named counters such as {@code live.sent.CRITICAL},
 * {@code live.folded.PRESSURE}, {@code live.digests}, {@code live.digest.folded}, {@code live.result.EXPIRED},
 * {@code live.scheduled}, {@code live.released}, {@code live.duplicates}. For tests and the demo report.
 */
public final class TopologyCounts implements TopologyCounters {
    private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();

    private void add(String name, long n) {
        counts.computeIfAbsent(name, k -> new LongAdder()).add(n);
    }

    private static String lane(Lane lane) {
        return lane.name().toLowerCase();
    }

    @Override
    public void sentOn(Lane lane, NotificationClass eventClass) {
        add(lane(lane) + ".sent." + eventClass, 1);
    }

    @Override
    public void folded(Lane lane, NotificationClass eventClass, FoldReason reason) {
        add(lane(lane) + ".folded." + reason, 1);
    }

    @Override
    public void digestEmitted(Lane lane, int foldedCount, DigestTrigger trigger) {
        add(lane(lane) + ".digests", 1);
        add(lane(lane) + ".digests." + trigger.tag(), 1);
        add(lane(lane) + ".digest.folded", foldedCount);
    }

    @Override
    public void result(Lane lane, NotificationClass eventClass, DeliveryStatus status) {
        add(lane(lane) + ".result." + status, 1);
    }

    @Override
    public void deadLettered(Lane lane) {
        add(lane(lane) + ".dlq", 1);
    }

    @Override
    public void duplicate(Lane lane) {
        add(lane(lane) + ".duplicates", 1);
    }

    @Override
    public void scheduled(Lane lane) {
        add(lane(lane) + ".scheduled", 1);
    }

    @Override
    public void released(Lane lane) {
        add(lane(lane) + ".released", 1);
    }

    @Override
    public void streamThreadFailed(boolean replaced) {
        add(replaced ? "stream.thread.replacements" : "stream.thread.shutdowns", 1);
    }

    /** One counter, 0 if never counted. */
    public long get(String name) {
        LongAdder a = counts.get(name);
        return a == null ? 0 : a.sum();
    }

    /** All counters, sorted by name. */
    public Map<String, Long> snapshot() {
        Map<String, Long> out = new TreeMap<>();
        counts.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }
}
