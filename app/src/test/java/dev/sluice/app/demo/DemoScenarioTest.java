package dev.sluice.app.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.Notification;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class DemoScenarioTest {
    private final List<Quake> quakes = QuakeCatalog.kamchatka();

    @Test
    void bundledCatalogueHoldsThe196RealEventsInTimeOrder() {
        assertThat(quakes).hasSize(196);
        assertThat(quakes).isSortedAccordingTo((a, b) -> a.time().compareTo(b.time()));
        Quake main = quakes.stream().filter(q -> q.id().equals("us6000qw60")).findFirst().orElseThrow();
        assertThat(main.magnitude()).isEqualTo(8.8);
        assertThat(main.region()).isEqualTo("Russia");
    }

    @Test
    void classesFollowIssueFive() {
        List<DemoScenario.Planned> plan = DemoScenario.plan(quakes, Audience.demo(quakes, 42, 300, 4, 5), Duration.ofSeconds(60), Instant.EPOCH);
        Notification mainShock = plan.stream().map(DemoScenario.Planned::notification)
                .filter(n -> n.getId().startsWith("us6000qw60:")).findFirst().orElseThrow();
        assertThat(mainShock.getEventClass()).isEqualTo(dev.sluice.avro.NotificationClass.CRITICAL);
        assertThat(mainShock.getExpiresAt()).isNotNull();
        // An M6.3 in Russia 5 minutes after the M8.8 is an aftershock update: collapsible by region.
        Notification aftershock = plan.stream().map(DemoScenario.Planned::notification)
                .filter(n -> n.getId().startsWith("us6000r0y5:")).findFirst().orElseThrow();
        assertThat(aftershock.getEventClass()).isEqualTo(dev.sluice.avro.NotificationClass.COLLAPSIBLE);
        assertThat(aftershock.getEntity()).isEqualTo("aftershocks in Russia");
        // The Guatemala quake before the main shock is routine.
        Notification before = plan.stream().map(DemoScenario.Planned::notification)
                .filter(n -> n.getId().startsWith("us6000qw5x:")).findFirst().orElseThrow();
        assertThat(before.getEventClass()).isEqualTo(dev.sluice.avro.NotificationClass.ROUTINE);
    }

    @Test
    void planIsSeededPerChatOrderedAndFitsTheReplayWindow() {
        Audience audience = Audience.demo(quakes, 42, 300, 4, 5);
        List<DemoScenario.Planned> plan = DemoScenario.plan(quakes, audience, Duration.ofSeconds(60), Instant.EPOCH);
        List<DemoScenario.Planned> again = DemoScenario.plan(quakes, Audience.demo(quakes, 42, 300, 4, 5),
                Duration.ofSeconds(60), Instant.EPOCH);
        assertThat(plan).isEqualTo(again);
        assertThat(plan.get(plan.size() - 1).releaseOffset()).isLessThanOrEqualTo(Duration.ofSeconds(60));
        assertThat(plan).isSortedAccordingTo((a, b) -> a.releaseOffset().compareTo(b.releaseOffset()));
        // The first 40 chats follow every Russian quake: 187 real events of the Kamchatka sequence.
        assertThat(plan.stream().filter(p -> p.notification().getChatId().equals("100000001")).count()).isEqualTo(187);
        assertThat(new HashSet<>(plan.stream().map(p -> p.notification().getId()).toList())).hasSize(plan.size());
        assertThat(plan.stream().map(DemoScenario.Planned::notification).map(Notification::getChatId))
                .anyMatch(c -> c.startsWith("-")).contains("900000001");
        assertThat(plan.size()).isBetween(8_000, 10_000);
    }
}
