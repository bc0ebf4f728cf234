package dev.sluice.topology;

import static dev.sluice.topology.Harness.notification;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.Notification;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A replay ({@code sluice replay}: attributes {@code sluice.replayed.from} and {@code .at}) is never folded into a
 * digest. Found from outside: replayed DELIVERED notifications, COLLAPSIBLE or ROUTINE behind a pending digest, were
 * folded; a digest has an id of its own, so the sender's sent marks of the folded ids were never read, and the chat got
 * them a second time. Sent on as itself, a replay is checked under its own id by the sender (an earlier delivered
 * attempt: not sent again, a result saying so).
 */
class ReplayNotFoldedTest extends HarnessTest {
    private static final Instant TEN = Instant.parse("2026-03-02T10:00:00Z");

    private static Notification replayed(Notification.Builder n) {
        return n.setAttributes(Map.of("sluice.replayed.from", "delivery.results:DELIVERED",
                "sluice.replayed.at", Long.toString(TEN.toEpochMilli()))).build();
    }

    @Test
    void aReplayedCollapsibleOrRoutineNotificationIsSentOnAsItselfNotFolded() {
        h = new Harness(stateDir, TEN, Map.of());
        h.send(notification("c-1", "42", TEN).setEventClass(NotificationClass.COLLAPSIBLE).build()); // pending in 42
        assertThat(h.drainLive()).isEmpty();

        h.send(replayed(notification("o-1", "42", TEN).setEventClass(NotificationClass.COLLAPSIBLE)));
        h.send(replayed(notification("o-3", "42", TEN))); // ROUTINE, its chat holds a pending entry
        h.senderStatus("alerts", "sender-1", 100_000, 30.0); // the bot under pressure
        h.send(replayed(notification("o-4", "43", TEN)));

        List<OutboundMessage> out = h.drainLive();
        assertThat(out).extracting(OutboundMessage::getId).containsExactly("o-1", "o-3", "o-4");
        assertThat(out).allSatisfy(m -> assertThat(m.getFoldedIds()).isEmpty());
        h.advance(Duration.ofSeconds(60), Duration.ofMillis(250));
        assertThat(h.drainLive()).extracting(OutboundMessage::getFoldedIds).as("the digest holds c-1 alone")
                .containsExactly(List.of("c-1"));
    }
}
