package dev.sluice.bench;

import dev.sluice.app.demo.ResultCollector;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.testkit.FakeTelegram;
import java.time.Duration;
import java.util.List;
import java.util.function.LongSupplier;

/** Waiting, bounded, for a phase's notifications to settle (one terminal result each). */
public final class Settle {
    private Settle() {
    }

    /** Results of the messages whose id starts with {@code tag-}. */
    public static List<DeliveryResult> results(ResultCollector collector, String tag) {
        String prefix = tag + "-";
        return collector.results().stream().filter(r -> r.getMessageId().startsWith(prefix)
                || r.getFoldedIds().stream().anyMatch(id -> id.startsWith(prefix))).toList();
    }

    /** Notifications of {@code tag} settled: a single result counts one, a digest its folded ids. */
    public static long settled(ResultCollector collector, String tag) {
        return results(collector, tag).stream().mapToLong(r -> r.getFoldedIds().isEmpty() ? 1 : r.getFoldedIds().size()).sum();
    }

    /**
     * Waits until {@code progress} reaches {@code expected}, printing a line every 10 s; gives up after
     * {@code timeout}, or when nothing moved for {@code stall}.
     *
     * @return true when it got there
     */
    public static boolean await(String what, long expected, LongSupplier progress, FakeTelegram telegram,
                                Duration timeout, Duration stall) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        long last = -1;
        long lastChange = start;
        long nextLine = start;
        while (true) {
            long now = System.nanoTime();
            long p = progress.getAsLong();
            if (p >= expected) {
                Infra.say("%s: %d/%d after %.1f s", what, p, expected, (now - start) / 1e9);
                return true;
            }
            if (p != last) {
                last = p;
                lastChange = now;
            }
            if (now > deadline || now - lastChange > stall.toNanos()) {
                Infra.say("%s: STOPPED at %d/%d after %.1f s (%s)", what, p, expected, (now - start) / 1e9,
                        now > deadline ? "timeout " + timeout.toSeconds() + " s" : "nothing moved for " + stall.toSeconds() + " s");
                return false;
            }
            if (now >= nextLine) {
                Infra.say("%s: %d/%d, provider accepted %d, 429s %d", what, p, expected, telegram.accepted().size(),
                        telegram.rejected429Count());
                nextLine = now + Duration.ofSeconds(10).toNanos();
            }
            Thread.sleep(250); // polling counters, bounded by the deadline
        }
    }
}
