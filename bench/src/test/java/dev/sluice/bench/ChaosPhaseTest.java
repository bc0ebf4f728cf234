package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Lane;
import dev.sluice.avro.NotificationClass;
import dev.sluice.testkit.FakeTelegramCall;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the chaos scenario counts as the killed sender's in flight. */
class ChaosPhaseTest {
    private static DeliveryResult result(String id, String chat, String sender, long atMs) {
        return DeliveryResult.newBuilder().setMessageId(id).setBotId("bot").setChatId(chat)
                .setStatus(DeliveryStatus.DELIVERED).setEventClass(NotificationClass.ROUTINE).setLane(Lane.LIVE)
                .setAttempts(1).setDueAt(Instant.ofEpochMilli(atMs)).setSentAt(Instant.ofEpochMilli(atMs))
                .setResultAt(Instant.ofEpochMilli(atMs)).setSenderInstance(sender).build();
    }

    private static FakeTelegramCall call(String chat, int seq, long atMs) {
        return new FakeTelegramCall("bot", chat, "[kill-sender] #" + seq + " to " + chat, atMs, 200, "sendMessage");
    }

    @Test
    void a_call_the_killed_sender_made_after_the_kill_was_decided_but_before_it_died_is_in_flight() {
        // chaos-1 owned chat 7 (its last result before the kill); the kill was decided at 1,000 and the process was
        // seen gone at 1,012; it called #2 at 1,005 (no result: lost with it) and #1 at 900 (result at 950)
        List<DeliveryResult> results = List.of(result("kill-sender-1", "7", "chaos-1", 950),
                result("kill-sender-2", "7", "chaos-3", 30_000));
        List<FakeTelegramCall> calls = List.of(call("7", 1, 900), call("7", 2, 1_005), call("7", 2, 30_000));
        Chaos.Fault f = new Chaos.Fault(1_000, 1_012, "chaos-1", 0, 0);
        assertThat(ChaosPhase.inFlightAtKill(calls, "[kill-sender]", results, f)).isEqualTo(1);
        Chaos.Fault deathUnknown = new Chaos.Fault(1_000, 1_000, "chaos-1", 0, 0);
        assertThat(ChaosPhase.inFlightAtKill(calls, "[kill-sender]", results, deathUnknown))
                .as("counted from the decision only, the call at 1,005 was missed").isZero();
    }
}
