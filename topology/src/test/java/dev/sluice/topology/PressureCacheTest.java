package dev.sluice.topology;

import static dev.sluice.topology.Harness.notification;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.OutboundMessage;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 21: {@link BotPressure} keeps a bot's decoded reports until the global store's entries of that bot change
 * ({@link StoreChanges}); every new report still decides the next notification, and a report still ages out without one.
 */
class PressureCacheTest extends HarnessTest {
    private static final Instant TEN = Instant.parse("2026-03-02T10:00:00Z");

    @Test
    void everyNewReportOfTheBotDecidesTheNextNotificationAndAReportAgesOutWithoutAChange() {
        h = new Harness(stateDir, TEN, Map.of("pressure.status.max.age.ms", "5000"));
        // each notification its own chat, so no pending digest key decides for it
        h.send(notification("a", "41", TEN).build()); // no report: sent on
        h.senderStatus("alerts", "s1", 100_000, 30.0); // 3,333 s to drain: pressure
        h.send(notification("b", "42", TEN).build());
        h.senderStatus("alerts", "s1", 0, 30.0); // the same instance drained
        h.send(notification("c", "43", TEN).build());
        h.senderStatus("alerts", "s2", 100_000, 30.0); // another instance of the bot: pressure again
        h.send(notification("d", "44", TEN).build());
        h.senderStatus("other", "s2", 0, 30.0); // another bot's report: alerts stays under pressure
        h.send(notification("e", "45", TEN).build());
        h.advance(Duration.ofSeconds(6)); // s2's report is older than 5 s now; the store did not change
        h.send(notification("f", "46", TEN).build());

        assertThat(h.drainLive()).extracting(OutboundMessage::getId).containsExactly("a", "c", "f");
        assertThat(h.counts.get("live.folded.PRESSURE")).as("b, d, e").isEqualTo(3);
    }

    @Test
    void aChangeCountsForEveryPrefixOfTheKeySoABotIdWithASlashIsCoveredToo() {
        StoreChanges changes = new StoreChanges();
        assertThat(changes.version("team/alerts")).isZero();
        changes.changed("team/alerts/s1");
        assertThat(changes.version("team/alerts")).isEqualTo(1);
        assertThat(changes.version("team")).isEqualTo(1);
        changes.changed("alerts/s1");
        assertThat(changes.version("alerts")).isEqualTo(1);
        assertThat(changes.version("team/alerts")).isEqualTo(1);
        changes.changed("no-instance");
        assertThat(changes.version("no-instance")).as("no bot/instance shape: no prefix").isZero();
    }
}
