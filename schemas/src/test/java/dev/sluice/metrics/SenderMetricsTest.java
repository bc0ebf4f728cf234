package dev.sluice.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.NotificationClass;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class SenderMetricsTest {
    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private SenderMetrics metrics;

    @BeforeEach
    void bind() {
        metrics = new SenderMetrics(List.of("alerts", "news"), BudgetState.SHARED, clock);
        metrics.bindTo(registry);
        metrics.budgetRate("alerts", 30);
    }

    @Test
    void everyMeterExistsAtBindTimeSoDashboardsSeeSeriesBeforeTheFirstEvent() {
        Set<String> names = registry.getMeters().stream().map(m -> m.getId().getName()).collect(Collectors.toSet());
        assertThat(names).containsAll(SluiceMetrics.all().stream().filter(n -> !n.startsWith("sluice.topology.")).toList());
        assertThat(registry.get(SluiceMetrics.RESULTS).counters())
                .hasSize(DeliveryStatus.values().length * NotificationClass.values().length);
        assertThat(registry.get(SluiceMetrics.RATE_LIMITED).tag("bot", "news").counters()).hasSize(3);
    }

    @Test
    void resultsAreCountedByStatusAndClass() {
        metrics.result(DeliveryStatus.DELIVERED, NotificationClass.CRITICAL);
        metrics.result(DeliveryStatus.DELIVERED, NotificationClass.CRITICAL);
        metrics.result(DeliveryStatus.EXPIRED, NotificationClass.CRITICAL);
        assertThat(registry.get(SluiceMetrics.RESULTS).tags("status", "DELIVERED", "class", "CRITICAL").counter().count()).isEqualTo(2);
        assertThat(registry.get(SluiceMetrics.RESULTS).tags("status", "EXPIRED", "class", "CRITICAL").counter().count()).isEqualTo(1);
        assertThat(registry.get(SluiceMetrics.RESULTS).tags("status", "DELIVERED", "class", "ROUTINE").counter().count()).isZero();
    }

    @Test
    void rateLimitedByScopeAndProviderOutcomes() {
        metrics.rateLimited("alerts", RateLimitScope.GROUP);
        metrics.providerResponse("alerts", ProviderOutcome.RATE_LIMITED);
        metrics.providerResponse("alerts", ProviderOutcome.OK);
        assertThat(registry.get(SluiceMetrics.RATE_LIMITED).tags("bot", "alerts", "scope", "group").counter().count()).isEqualTo(1);
        assertThat(registry.get(SluiceMetrics.RATE_LIMITED).tags("bot", "alerts", "scope", "chat").counter().count()).isZero();
        assertThat(registry.get(SluiceMetrics.PROVIDER_REQUESTS).tags("bot", "alerts").counters())
                .hasSize(ProviderOutcome.values().length);
        assertThat(registry.get(SluiceMetrics.PROVIDER_REQUESTS).tags("bot", "alerts", "outcome", "rate_limited").counter().count()).isEqualTo(1);
        assertThat(registry.get(SluiceMetrics.PROVIDER_REQUESTS).tags("bot", "alerts", "outcome", "ok").counter().count()).isEqualTo(1);
        assertThat(registry.get(SluiceMetrics.PROVIDER_REQUESTS).tags("bot", "alerts", "outcome", "forbidden").counter().count()).isZero();
    }

    @Test
    void lagIsATimerPerClassWithPercentiles() {
        for (int i = 1; i <= 100; i++) {
            metrics.lag(NotificationClass.ROUTINE, Duration.ofMillis(i * 10L));
        }
        metrics.lag(NotificationClass.ROUTINE, Duration.ofMillis(-5));
        var timer = registry.get(SluiceMetrics.DELIVERY_LAG).tag("class", "ROUTINE").timer();
        assertThat(timer.count()).isEqualTo(101);
        assertThat(timer.max(TimeUnit.MILLISECONDS)).isEqualTo(1000.0);
        var percentiles = timer.takeSnapshot().percentileValues();
        assertThat(percentiles).extracting(p -> p.percentile()).containsExactly(0.5, 0.99);
        assertThat(percentiles[0].value(TimeUnit.MILLISECONDS)).isBetween(400.0, 600.0);
        assertThat(percentiles[1].value(TimeUnit.MILLISECONDS)).isBetween(900.0, 1100.0);
    }

    @Test
    void utilisationIsGrantedInTheLastMinuteOverTheBudgetForAMinute() {
        assertThat(gauge(SluiceMetrics.BUDGET_UTILISATION, "alerts")).isZero();
        for (int s = 0; s < 60; s++) {
            metrics.budgetGranted("alerts", 15); // half of 30/s
            clock.advance(Duration.ofSeconds(1));
        }
        assertThat(gauge(SluiceMetrics.BUDGET_UTILISATION, "alerts")).isCloseTo(0.5, within(0.01));
        clock.advance(Duration.ofSeconds(61));
        assertThat(gauge(SluiceMetrics.BUDGET_UTILISATION, "alerts")).isZero();
        assertThat(registry.get(SluiceMetrics.BUDGET_GRANTED).tag("bot", "alerts").counter().count()).isEqualTo(900);
        // No configured rate: unknown, not zero.
        assertThat(gauge(SluiceMetrics.BUDGET_UTILISATION, "news")).isNaN();
    }

    @Test
    void drainTimeIsBacklogOverDrainRateNotRawDepth() {
        long[] backlog = {0};
        metrics.backlog("alerts", () -> backlog[0]);
        assertThat(gauge(SluiceMetrics.DRAIN_TIME, "alerts")).isZero();
        backlog[0] = 600;
        assertThat(gauge(SluiceMetrics.DRAIN_TIME, "alerts")).isInfinite(); // backlog, nothing draining
        for (int s = 0; s < 60; s++) {
            metrics.budgetGranted("alerts", 20);
            clock.advance(Duration.ofSeconds(1));
        }
        assertThat(gauge(SluiceMetrics.DRAIN_RATE, "alerts")).isCloseTo(20.0, within(0.5));
        assertThat(gauge(SluiceMetrics.DRAIN_TIME, "alerts")).isCloseTo(30.0, within(1.0));
        assertThat(gauge(SluiceMetrics.BACKLOG, "alerts")).isEqualTo(600);
    }

    /**
     * Session 17: a bot quiet for a minute that starts sending at 25/s read 25/60 per second after its first second,
     * and the topology saw its backlog's drain time 60 times too long (pressure: routine notifications folded).
     */
    @Test
    void theDrainRateIsOverBusySecondsSoABurstAfterAQuietSpellReadsItsOwnRate() {
        long[] backlog = {0};
        metrics.backlog("alerts", () -> backlog[0]);
        metrics.budgetGranted("alerts", 10);
        clock.advance(Duration.ofSeconds(120)); // quiet: the window is empty again
        assertThat(gauge(SluiceMetrics.DRAIN_RATE, "alerts")).isZero();
        backlog[0] = 500;
        metrics.budgetGranted("alerts", 25);
        clock.advance(Duration.ofSeconds(1));
        metrics.budgetGranted("alerts", 25);
        clock.advance(Duration.ofMillis(999));
        assertThat(gauge(SluiceMetrics.DRAIN_RATE, "alerts")).as("50 in 2 s").isCloseTo(25.0, within(0.1));
        assertThat(gauge(SluiceMetrics.DRAIN_TIME, "alerts")).isCloseTo(20.0, within(0.1));
        clock.advance(Duration.ofSeconds(40)); // a quiet gap shorter than the window, then another burst
        metrics.budgetGranted("alerts", 25);
        clock.advance(Duration.ofMillis(500));
        assertThat(gauge(SluiceMetrics.DRAIN_RATE, "alerts")).as("75 in 3 busy s, the gap left out").isCloseTo(25.0, within(0.1));
        for (int s = 0; s < 70; s++) { // a full minute of 25/s: the window's rate
            metrics.budgetGranted("alerts", 25);
            clock.advance(Duration.ofSeconds(1));
        }
        assertThat(gauge(SluiceMetrics.DRAIN_RATE, "alerts")).isCloseTo(25.0, within(0.5));
        long stuckFrom = clock.millis();
        clock.advance(Duration.ofSeconds(30)); // then stuck (a penalty), a backlog waiting all along (status reports)
        metrics.markBusy("alerts", stuckFrom, clock.millis());
        assertThat(gauge(SluiceMetrics.DRAIN_RATE, "alerts")).as("30 s of grants over 60 busy s").isCloseTo(12.5, within(0.5));
        clock.advance(Duration.ofSeconds(20)); // quiet (no backlog): not draining time
        assertThat(gauge(SluiceMetrics.DRAIN_RATE, "alerts")).as("about 10 s of grants over 40 busy s").isCloseTo(6.0, within(0.7));
    }

    /** Review, session 17: a report at the start of a second must not count that second whole, with no grant in it yet. */
    @Test
    void marksEndAtTheLastWholeSecondSoAReportAtASecondsStartDoesNotUnderstateTheRate() {
        clock.advance(Duration.ofMillis(1000 - clock.millis() % 1000)); // at a whole second
        long from = clock.millis();
        for (int s = 0; s < 4; s++) {
            metrics.budgetGranted("alerts", 25);
            clock.advance(Duration.ofSeconds(1));
        }
        metrics.markBusy("alerts", from, clock.millis()); // a status report at x.000: its second has just begun
        assertThat(gauge(SluiceMetrics.DRAIN_RATE, "alerts")).isCloseTo(25.0, within(0.01));
    }

    @Test
    void budgetModeGaugeAndTimeInEachMode() {
        assertThat(modeGauge("shared")).isEqualTo(1);
        clock.advance(Duration.ofSeconds(10));
        metrics.budgetState(BudgetState.FALLBACK_LOCAL);
        clock.advance(Duration.ofSeconds(3));
        assertThat(modeGauge("shared")).isZero();
        assertThat(modeGauge("fallback_local")).isEqualTo(1);
        assertThat(registry.get(SluiceMetrics.BUDGET_MODE_TIME).tag("mode", "shared").functionCounter().count()).isEqualTo(10.0);
        assertThat(registry.get(SluiceMetrics.BUDGET_MODE_TIME).tag("mode", "fallback_local").functionCounter().count()).isEqualTo(3.0);
        metrics.budgetState(BudgetState.SHARED);
        clock.advance(Duration.ofSeconds(2));
        assertThat(registry.get(SluiceMetrics.BUDGET_MODE_TIME).tag("mode", "shared").functionCounter().count()).isEqualTo(12.0);
        assertThat(metrics.currentState()).isEqualTo(BudgetState.SHARED);
    }

    @Test
    void bufferedRecordsAndMaxLaneDepthComeFromSuppliers() {
        metrics.bufferedRecords(() -> 1234);
        metrics.maxLaneDepth(() -> 17);
        assertThat(registry.get(SluiceMetrics.BUFFERED_RECORDS).gauge().value()).isEqualTo(1234);
        assertThat(registry.get(SluiceMetrics.LANE_DEPTH_MAX).gauge().value()).isEqualTo(17);
    }

    @Test
    void refusalsByLimitAndBackpressurePauses() {
        metrics.budgetRefused("alerts", "chat");
        metrics.budgetRefused("alerts", "chat");
        metrics.backpressurePaused();
        assertThat(registry.get(SluiceMetrics.BUDGET_REFUSALS).tags("bot", "alerts", "limit", "chat").counter().count()).isEqualTo(2);
        assertThat(registry.get(SluiceMetrics.BUDGET_REFUSALS).tags("bot", "alerts", "limit", "gate").counter().count()).isZero();
        assertThat(registry.get(SluiceMetrics.BACKPRESSURE_PAUSES).counter().count()).isEqualTo(1);
        assertThatThrownBy(() -> metrics.budgetRefused("alerts", "CHAT")).hasMessageContaining("limit must be one of");
    }

    @Test
    void redisErrorsByKindWithUnknownKindsAsOther() {
        metrics.redisError("timeout");
        metrics.redisError("weird");
        assertThat(registry.get(SluiceMetrics.REDIS_ERRORS).tag("kind", "timeout").counter().count()).isEqualTo(1);
        assertThat(registry.get(SluiceMetrics.REDIS_ERRORS).tag("kind", "other").counter().count()).isEqualTo(1);
    }

    @Test
    void unknownBotsAreRejectedAndATokenIsNeverEchoedOrTagged() {
        String token = "123456789:" + "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq"; // fake, built from parts
        assertThatThrownBy(() -> metrics.budgetGranted(token, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageNotContaining(token)
                .hasMessageContaining("[redacted]");
        assertThat(registry.getMeters().stream().flatMap(m -> m.getId().getTags().stream()))
                .noneMatch(t -> t.getValue().contains(token));
    }

    @Test
    void recordingBeforeBindingFailsLoudly() {
        SenderMetrics unbound = new SenderMetrics(List.of("alerts"), BudgetState.LOCAL, clock);
        assertThatThrownBy(() -> unbound.result(DeliveryStatus.DELIVERED, NotificationClass.ROUTINE))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("bindTo");
        assertThatThrownBy(() -> metrics.bindTo(new SimpleMeterRegistry())).isInstanceOf(IllegalStateException.class);
    }

    private double gauge(String name, String bot) {
        return registry.get(name).tag("bot", bot).gauge().value();
    }

    private double modeGauge(String mode) {
        return registry.get(SluiceMetrics.BUDGET_MODE).tag("mode", mode).gauge().value();
    }
}
