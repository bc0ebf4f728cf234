package dev.sluice.app.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.app.demo.ReportAnalyzer.ProviderMessage;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.testkit.SlidingWindows;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ReportAnalyzerTest {
    private static final DemoReport.RunInfo RUN = new DemoReport.RunInfo(3, "redis", 30, 20, 28, 1.0, true);

    private static Notification n(String id, String chat, String text) {
        return Notification.newBuilder().setId(id).setBotId("b").setChatId(chat).setKind("k").setText(text)
                .setCreatedAt(Instant.EPOCH).build();
    }

    private static DeliveryResult r(String id, String chat, DeliveryStatus s, long due, long sent) {
        return DeliveryResult.newBuilder().setMessageId(id).setBotId("b").setChatId(chat).setStatus(s)
                .setDueAt(Instant.ofEpochMilli(due)).setSentAt(Instant.ofEpochMilli(sent))
                .setResultAt(Instant.ofEpochMilli(sent)).build();
    }

    @Test
    void slidingWindowCountsTheBusiestHalfOpenWindow() {
        assertThat(SlidingWindows.maxPerWindow(List.of(0L, 999L, 1000L, 1001L), 1000)).isEqualTo(3);
        assertThat(SlidingWindows.maxPerWindow(List.of(0L, 1000L, 2000L), 1000)).isEqualTo(1);
        assertThat(SlidingWindows.maxPerWindow(List.of(), 1000)).isZero();
    }

    @Test
    void detectsOrderViolationsDuplicatesAndUnaccountedInputs() {
        List<Notification> in = List.of(n("a", "1", "A"), n("b", "1", "B"), n("c", "2", "C"), n("d", "2", "D"));
        List<DeliveryResult> results = List.of(r("a", "1", DeliveryStatus.DELIVERED, 0, 10),
                r("b", "1", DeliveryStatus.DELIVERED, 0, 30), r("c", "2", DeliveryStatus.DELIVERED, 0, 20),
                r("c", "2", DeliveryStatus.DELIVERED, 0, 25));
        List<ProviderMessage> accepted = List.of(new ProviderMessage("1", "B", 5), new ProviderMessage("1", "A", 6),
                new ProviderMessage("2", "C", 7), new ProviderMessage("2", "C", 8));
        DemoReport report = ReportAnalyzer.analyze(in, results, Set.of(), accepted, 2, RUN);
        assertThat(report.orderViolations()).isEqualTo(1);
        assertThat(report.duplicates()).isEqualTo(1);
        assertThat(report.unaccounted()).isEqualTo(2); // c has two results, d none
        assertThat(report.results()).containsEntry("DELIVERED", 4L).containsEntry("FAILED", 0L);
        assertThat(report.provider429()).isEqualTo(2);
        assertThat(report.maxBotMsgsPer1s()).isEqualTo(4);
        assertThat(report.lagMs().p50()).isEqualTo(20);
        assertThat(report.lagMs().max()).isEqualTo(30);
    }

    /** A CRITICAL message may overtake what its chat has pending (DESIGN.md); anything else overtaking counts. */
    @Test
    void aCriticalMessageAheadOfEarlierOnesIsNotAViolationButOneBehindALaterOneIs() {
        Notification routine = n("a", "1", "A");
        Notification critical = n("c", "1", "C");
        critical.setEventClass(NotificationClass.CRITICAL);
        Notification later = n("z", "1", "Z");
        List<Notification> in = List.of(routine, critical, later);
        assertThat(ReportAnalyzer.orderViolations(in, List.of(new ProviderMessage("1", "C", 1), new ProviderMessage("1", "A", 2),
                new ProviderMessage("1", "Z", 3)))).as("the critical one went first").isZero();
        assertThat(ReportAnalyzer.orderViolations(in, List.of(new ProviderMessage("1", "Z", 1), new ProviderMessage("1", "C", 2),
                new ProviderMessage("1", "A", 3)))).as("the critical and the routine one behind a later one").isEqualTo(2);
    }

    @Test
    void deadLettersAndDigestsSettleTheirInputsOnce() {
        List<Notification> in = List.of(n("a", "1", "A"), n("b", "1", "B"), n("x", "1", "X"));
        DeliveryResult digest = r("digest-1", "1", DeliveryStatus.DELIVERED, 0, 1);
        digest.setFoldedIds(List.of("a", "b"));
        DemoReport report = ReportAnalyzer.analyze(in, List.of(digest), Set.of("x"), List.of(), 0, RUN);
        assertThat(report.unaccounted()).isZero();
        assertThat(report.deadLettered()).isEqualTo(1);
    }

    @Test
    void lagIsReportedPerClassWithDigestsApart() {
        DeliveryResult critical = r("c1", "1", DeliveryStatus.DELIVERED, 0, 40);
        critical.setEventClass(NotificationClass.CRITICAL);
        DeliveryResult critical2 = r("c2", "2", DeliveryStatus.DELIVERED, 0, 60);
        critical2.setEventClass(NotificationClass.CRITICAL);
        DeliveryResult routine = r("r1", "1", DeliveryStatus.DELIVERED, 0, 5_000);
        routine.setEventClass(NotificationClass.ROUTINE);
        DeliveryResult digest = r("digest-1", "1", DeliveryStatus.DELIVERED, 0, 9_000);
        digest.setEventClass(NotificationClass.COLLAPSIBLE);
        digest.setFoldedIds(List.of("a", "b"));
        DeliveryResult expired = r("e1", "3", DeliveryStatus.EXPIRED, 0, 1);
        expired.setEventClass(NotificationClass.CRITICAL);
        DemoReport report = ReportAnalyzer.analyze(List.of(), List.of(critical, critical2, routine, digest, expired), Set.of(), List.of(), 0, RUN);
        assertThat(report.lagMsByClass()).containsOnlyKeys("CRITICAL", "ROUTINE", "COLLAPSIBLE", "COLLAPSIBLE-digest");
        assertThat(report.lagMsByClass().get("CRITICAL")).isEqualTo(new DemoReport.ClassLag(2, 40, 60, 60));
        assertThat(report.lagMsByClass().get("ROUTINE")).isEqualTo(new DemoReport.ClassLag(1, 5_000, 5_000, 5_000));
        assertThat(report.lagMsByClass().get("COLLAPSIBLE")).isEqualTo(new DemoReport.ClassLag(0, 0, 0, 0));
        assertThat(report.lagMsByClass().get("COLLAPSIBLE-digest")).isEqualTo(new DemoReport.ClassLag(1, 9_000, 9_000, 9_000));
        assertThat(report.toText()).contains("    CRITICAL                      2  p50=40 p99=60 max=60")
                .contains("    COLLAPSIBLE-digest            1  p50=9000 p99=9000 max=9000");
    }

    @Test
    void groupWindowOnlyCountsGroups() {
        List<ProviderMessage> accepted = List.of(new ProviderMessage("-5", "A", 0), new ProviderMessage("-5", "B", 59_000),
                new ProviderMessage("7", "C", 1), new ProviderMessage("7", "D", 2), new ProviderMessage("7", "E", 3));
        DemoReport report = ReportAnalyzer.analyze(List.of(), List.of(), Set.of(), accepted, 0, RUN);
        assertThat(report.maxGroupMsgsPer60s()).isEqualTo(2);
        assertThat(report.maxChatMsgsPer1s()).isEqualTo(3);
    }
}
