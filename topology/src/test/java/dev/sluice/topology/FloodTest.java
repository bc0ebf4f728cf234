package dev.sluice.topology;

import static dev.sluice.topology.Harness.notification;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real incident of issue 5: one person moved a weekly meeting of 180 people a year ahead, 52 updates
 * each: 9,360 routine events in 40 s, with 20 critical reminders among them, while the bot is under pressure.
 */
class FloodTest {
    private static final Instant START = Instant.parse("2026-03-02T09:00:00Z");
    private static final int PEOPLE = 180;
    private static final int WEEKS = 52;
    private static final int CRITICAL = 20;

    @TempDir
    Path stateDir;

    @Test
    void criticalGoesAtOnceInOrderRoutineFoldsAndEveryIdIsAccountedForOnce() {
        try (Harness h = new Harness(stateDir, START, Map.of())) {
            h.senderStatus("alerts", "sender-1", 40_000, 30.0); // drain time 22 min: pressure
            h.senderStatus("alerts", "sender-2", 40_000, 30.0);

            int routineTotal = PEOPLE * WEEKS;
            int every = routineTotal / CRITICAL;
            List<String> inputIds = new ArrayList<>();
            List<String> criticalSent = new ArrayList<>();
            List<String> criticalSeen = new ArrayList<>();
            List<OutboundMessage> outbox = new ArrayList<>();
            long stepNanos = Duration.ofSeconds(40).toNanos() / (routineTotal + CRITICAL);
            long elapsedNanos = 0;
            Duration advanced = Duration.ZERO;
            int r = 0;
            for (int week = 0; week < WEEKS; week++) {
                for (int person = 0; person < PEOPLE; person++) {
                    String id = "move-" + week + "-" + person;
                    inputIds.add(id);
                    h.send(notification(id, Integer.toString(1000 + person), h.now()).setKind("meeting.updated")
                            .setEntity("weekly-sync").setText("Weekly sync moved to 2027, week " + week).build());
                    r++;
                    if (r % every == 0 && criticalSent.size() < CRITICAL) {
                        String cid = "reminder-" + criticalSent.size();
                        inputIds.add(cid);
                        criticalSent.add(cid);
                        h.send(notification(cid, Integer.toString(1000 + criticalSent.size() * 7), h.now())
                                .setKind("meeting.reminder").setEventClass(NotificationClass.CRITICAL)
                                .setExpiresAt(h.now().plusSeconds(600)).setText("Starts in 10 minutes").build());
                        List<OutboundMessage> now = h.drainLive();
                        // at once: the reminder is in the outbox right after it was piped, before any time passes
                        assertThat(now).extracting(OutboundMessage::getId).contains(cid);
                        now.stream().filter(m -> m.getEventClass() == NotificationClass.CRITICAL).forEach(m -> criticalSeen.add(m.getId()));
                        outbox.addAll(now);
                    }
                    elapsedNanos += stepNanos;
                    Duration target = Duration.ofNanos(elapsedNanos).truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
                    if (target.minus(advanced).toMillis() >= 100) {
                        h.advance(target.minus(advanced));
                        advanced = target;
                    }
                }
            }
            assertThat(advanced).isLessThanOrEqualTo(Duration.ofSeconds(40));
            outbox.addAll(h.drainLive());
            h.advance(Duration.ofSeconds(61), Duration.ofSeconds(1)); // the flush punctuator
            outbox.addAll(h.drainLive());
            List<DeliveryResult> results = h.resultsOut.readValuesToList();

            assertThat(criticalSent).hasSize(CRITICAL);
            assertThat(criticalSeen).as("all critical, in order").containsExactlyElementsOf(criticalSent);

            List<OutboundMessage> routineOut = outbox.stream().filter(m -> m.getEventClass() != NotificationClass.CRITICAL).toList();
            assertThat(routineOut.size()).as("routine outbox messages <= 40%% of %d routine inputs", routineTotal)
                    .isLessThanOrEqualTo(routineTotal * 40 / 100);
            assertThat(routineOut).as("one digest per person").hasSize(PEOPLE);
            assertThat(routineOut).allSatisfy(m -> {
                assertThat(m.getDigestCount()).isEqualTo(WEEKS);
                assertThat(m.getText()).startsWith("52 updates to meeting.updated weekly-sync");
            });

            // Every input id: exactly one fate (sent on as itself, folded into exactly one digest, or a result).
            List<String> fates = new ArrayList<>();
            for (OutboundMessage m : outbox) {
                if (m.getDigestCount() == 0) {
                    fates.add(m.getId());
                } else {
                    assertThat(m.getFoldedIds()).hasSize(m.getDigestCount());
                    fates.addAll(m.getFoldedIds());
                }
            }
            results.forEach(x -> fates.add(x.getMessageId()));
            assertThat(h.dlq.isEmpty()).isTrue();
            Map<String, Long> times = fates.stream().collect(Collectors.groupingBy(Function.identity(), HashMap::new, Collectors.counting()));
            assertThat(times.values()).as("no id twice").allMatch(c -> c == 1);
            assertThat(times.keySet()).as("no id lost").containsExactlyInAnyOrderElementsOf(inputIds);
            assertThat(inputIds).hasSize(routineTotal + CRITICAL);
            System.out.printf("flood: %d routine in, %d routine out (%.1f%%), %d critical out; counters %s%n",
                    routineTotal, routineOut.size(), 100.0 * routineOut.size() / routineTotal, criticalSeen.size(), h.counts.snapshot());
        }
    }

    static List<String> ids(List<Notification> ns) {
        return ns.stream().map(Notification::getId).toList();
    }
}
