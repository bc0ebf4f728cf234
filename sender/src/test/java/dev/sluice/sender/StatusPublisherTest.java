package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.SenderStatus;
import dev.sluice.config.Settings;
import dev.sluice.metrics.BudgetState;
import dev.sluice.metrics.SenderMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * Session 17: a report of "backlog, drain rate 0" reads as an infinite drain time in the topology (pressure: routine
 * notifications folded until a digest flush). A bot's first message after a quiet minute gave exactly that report for
 * the milliseconds before its first grant; now a fresh backlog is reported once it has a grant, or once it has waited
 * two status intervals without one (then the bot is stuck, and that is pressure).
 */
class StatusPublisherTest {
    @Test
    void aFreshBacklogWithoutAGrantIsReportedOnlyWhenItHasWaitedTwoIntervals() {
        dev.sluice.testkit.ManualClock clock = new dev.sluice.testkit.ManualClock(Instant.parse("2026-12-03T12:00:00Z"));
        SenderConfig config = SenderConfig.from(Settings.of(Map.of("bootstrap.servers", "localhost:9092",
                "schema.registry.url", "http://localhost:8081", "redis.url", "redis://localhost:6379",
                "bot.alerts.token", dev.sluice.testkit.FakeTokens.of("700000009"), "sender.status.interval.ms", "1000")));
        SenderMetrics metrics = new SenderMetrics(List.of("alerts"), BudgetState.SHARED, clock);
        metrics.bindTo(new SimpleMeterRegistry());
        MockProducer<String, SenderStatus> producer = new MockProducer<>(true, null, new StringSerializer(),
                (topic, status) -> new byte[0]);
        long[] backlog = {0};
        StatusPublisher publisher = new StatusPublisher(producer, config, bot -> backlog[0], metrics, clock);

        publisher.publish();
        assertThat(reports(producer)).as("no backlog: reported").hasSize(1);
        backlog[0] = 5; // the first messages after a quiet minute, no grant yet
        publisher.publish();
        clock.advance(Duration.ofMillis(1999));
        publisher.publish();
        assertThat(reports(producer)).as("not yet: it may be granted within ms").hasSize(1);
        clock.advance(Duration.ofMillis(1));
        publisher.publish();
        assertThat(reports(producer)).hasSize(2);
        assertThat(reports(producer).get(1).getBacklog()).isEqualTo(5);
        assertThat(reports(producer).get(1).getDrainRatePerS()).as("stuck two intervals: pressure").isZero();

        backlog[0] = 0;
        publisher.publish();
        backlog[0] = 3; // fresh again, and granted at once
        metrics.budgetGranted("alerts", 2);
        publisher.publish();
        assertThat(reports(producer)).hasSize(4);
        assertThat(reports(producer).get(3).getDrainRatePerS()).isPositive();

        for (int i = 0; i < 9; i++) { // then no grant while the backlog waits: its seconds are draining time
            clock.advance(Duration.ofSeconds(1));
            publisher.publish();
        }
        assertThat(reports(producer).get(reports(producer).size() - 1).getDrainRatePerS())
                .as("2 grants over the 10 s the backlog waited").isCloseTo(0.2, org.assertj.core.data.Offset.offset(0.05));
    }

    private static List<SenderStatus> reports(MockProducer<String, SenderStatus> producer) {
        return producer.history().stream().map(ProducerRecord::value).toList();
    }
}
