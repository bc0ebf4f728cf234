package dev.sluice.app.demo;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.testkit.SlidingWindows;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Computes a {@link DemoReport} from what went in (notifications), what came out (delivery results and
 * dead letters) and what the provider accepted. Pure: no I/O, so the invariants are unit-tested.
 */
public final class ReportAnalyzer {

    /**
     * A message the provider accepted.
     *
     * @param chatId           target chat
     * @param text             text as received
     * @param acceptedAtMillis provider clock, epoch milliseconds
     */
    public record ProviderMessage(String chatId, String text, long acceptedAtMillis) {
    }

    private ReportAnalyzer() {
    }

    public static DemoReport analyze(List<Notification> produced, Collection<DeliveryResult> results,
                                     Set<String> deadLetteredIds, List<ProviderMessage> accepted, long provider429,
                                     DemoReport.RunInfo run) {
        Map<String, Long> byStatus = new TreeMap<>();
        for (DeliveryStatus s : DeliveryStatus.values()) {
            byStatus.put(s.name(), 0L);
        }
        Map<String, Integer> fates = new HashMap<>();
        List<Long> lags = new ArrayList<>();
        Map<String, List<Long>> lagsByClass = new java.util.LinkedHashMap<>();
        DemoReport.LAG_CLASSES.forEach(c -> lagsByClass.put(c, new ArrayList<>()));
        for (DeliveryResult r : results) {
            byStatus.merge(r.getStatus().name(), 1L, Long::sum);
            if (r.getFoldedIds().isEmpty()) {
                fates.merge(r.getMessageId(), 1, Integer::sum);
            } else {
                r.getFoldedIds().forEach(id -> fates.merge(id, 1, Integer::sum));
            }
            if (r.getStatus() == DeliveryStatus.DELIVERED && r.getSentAt() != null && r.getDueAt() != null) {
                long lag = Math.max(0, r.getSentAt().toEpochMilli() - r.getDueAt().toEpochMilli());
                lags.add(lag);
                lagsByClass.computeIfAbsent(lagClass(r), k -> new ArrayList<>()).add(lag);
            }
        }
        deadLetteredIds.forEach(id -> fates.merge(id, 1, Integer::sum));
        long unaccounted = produced.stream().filter(n -> fates.getOrDefault(n.getId(), 0) != 1).count();
        long digests = results.stream().filter(r -> !r.getFoldedIds().isEmpty()).count();
        long folded = results.stream().mapToLong(r -> r.getFoldedIds().size()).sum();

        return new DemoReport(produced.size(), byStatus, deadLetteredIds.size(), accepted.size(), provider429,
                SlidingWindows.maxPerWindow(accepted.stream().map(ProviderMessage::acceptedAtMillis).toList(), 1_000),
                maxPerChat(accepted, false, 1_000), maxPerChat(accepted, true, 60_000),
                orderViolations(produced, accepted), duplicates(accepted), unaccounted, folded, digests,
                byStatus.get(DeliveryStatus.EXPIRED.name()), byStatus.get(DeliveryStatus.SKIPPED_INACTIVE.name()), lag(lags), lagByClass(lagsByClass), run);
    }

    private static long maxPerChat(List<ProviderMessage> accepted, boolean groupsOnly, long windowMillis) {
        Map<String, List<Long>> perChat = new HashMap<>();
        for (ProviderMessage m : accepted) {
            if (!groupsOnly || m.chatId().startsWith("-")) {
                perChat.computeIfAbsent(m.chatId(), k -> new ArrayList<>()).add(m.acceptedAtMillis());
            }
        }
        return perChat.values().stream().mapToLong(t -> SlidingWindows.maxPerWindow(t, windowMillis)).max().orElse(0);
    }

    /**
     * Per chat, a message the provider accepted after a message that was produced later is one
     * violation, unless that later one is CRITICAL: it goes ahead of what its chat has pending in digests on purpose
     * (DESIGN.md, Topology step 5). Messages are matched to notifications by their text (a digest of one
     * notification carries its text).
     */
    static long orderViolations(List<Notification> produced, List<ProviderMessage> accepted) {
        Map<String, Map<String, Integer>> producedIndex = new HashMap<>();
        Set<String> critical = new HashSet<>();
        for (Notification n : produced) {
            Map<String, Integer> idx = producedIndex.computeIfAbsent(n.getChatId(), k -> new HashMap<>());
            idx.putIfAbsent(n.getText(), idx.size());
            if (n.getEventClass() == NotificationClass.CRITICAL) {
                critical.add(n.getChatId() + '\u0000' + n.getText());
            }
        }
        List<ProviderMessage> byTime = new ArrayList<>(accepted);
        byTime.sort((a, b) -> Long.compare(a.acceptedAtMillis(), b.acceptedAtMillis()));
        Map<String, Integer> highest = new HashMap<>();
        long violations = 0;
        for (ProviderMessage m : byTime) {
            Integer idx = producedIndex.getOrDefault(m.chatId(), Map.of()).get(m.text());
            if (idx == null) {
                continue;
            }
            Integer prev = highest.get(m.chatId());
            if (prev != null && idx < prev) {
                violations++;
            } else if (!critical.contains(m.chatId() + '\u0000' + m.text())) {
                highest.put(m.chatId(), idx); // a CRITICAL one may overtake: it sets no bar for those before it
            }
        }
        return violations;
    }

    static long duplicates(List<ProviderMessage> accepted) {
        Set<String> seen = new HashSet<>();
        return accepted.stream().filter(m -> !seen.add(m.chatId() + '\u0000' + m.text())).count();
    }

    /** A digest's result is COLLAPSIBLE-digest; a single message its class (UNCLASSIFIED without one). */
    static String lagClass(DeliveryResult r) {
        if (!r.getFoldedIds().isEmpty()) {
            return DemoReport.DIGEST_CLASS;
        }
        return r.getEventClass() == null ? "UNCLASSIFIED" : r.getEventClass().name();
    }

    static Map<String, DemoReport.ClassLag> lagByClass(Map<String, List<Long>> lagsByClass) {
        Map<String, DemoReport.ClassLag> out = new java.util.LinkedHashMap<>();
        lagsByClass.forEach((c, l) -> {
            DemoReport.Lag lag = lag(l);
            out.put(c, new DemoReport.ClassLag(l.size(), lag.p50(), lag.p99(), lag.max()));
        });
        return out;
    }

    static DemoReport.Lag lag(List<Long> lags) {
        if (lags.isEmpty()) {
            return new DemoReport.Lag(0, 0, 0);
        }
        List<Long> sorted = new ArrayList<>(lags);
        sorted.sort(null);
        return new DemoReport.Lag(percentile(sorted, 50), percentile(sorted, 99), sorted.get(sorted.size() - 1));
    }

    /** Nearest-rank percentile of a sorted list. */
    static long percentile(List<Long> sorted, int p) {
        int rank = (int) Math.ceil(p / 100.0 * sorted.size());
        return sorted.get(Math.max(0, rank - 1));
    }
}
