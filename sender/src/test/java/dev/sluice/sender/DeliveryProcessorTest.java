package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.sender.budget.BudgetLimits;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.Limit;
import dev.sluice.sender.telegram.SendOutcome;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class DeliveryProcessorTest {
    private final ManualClock clock = new ManualClock();
    private final Fakes.ScriptedBudget budget = new Fakes.ScriptedBudget();
    private final Fakes.ScriptedTransport transport = new Fakes.ScriptedTransport();
    private final Fakes.RecordingSink sink = new Fakes.RecordingSink();
    private final SenderMetrics metrics = new SenderMetrics(new SimpleMeterRegistry(), "test-1");
    private final DeliveryProcessor processor = processor(new SplittableRandom(7));
    private final TopicPartition tp = new TopicPartition("outbox.live", 0);

    private DeliveryProcessor processor(RandomGenerator random) {
        return new DeliveryProcessor(budget, transport, sink, clock, random, metrics, Set.of("bot"), "test-1", 3,
                Duration.ofMillis(100), Duration.ofMillis(1000), Duration.ofMillis(200),
                new BudgetLimits(1000, 1000, 1000, 1000),
                new RateLimitAttribution(Duration.ofSeconds(1), 2));
    }

    private PendingMessage pending(String id, String chat) {
        return new PendingMessage(tp, 0, Fakes.message(id, chat, clock.instant().minusMillis(50), null));
    }

    private long now() {
        return clock.millis();
    }

    @Test
    void delivered_writes_one_result_with_times_attempts_and_instance() {
        Step step = processor.process(pending("m1", "42"));
        assertThat(step).isEqualTo(Step.DONE);
        DeliveryResult r = sink.results.get(0);
        assertThat(r.getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
        assertThat(r.getMessageId()).isEqualTo("m1");
        assertThat(r.getChatId()).isEqualTo("42");
        assertThat(r.getAttempts()).isEqualTo(1);
        assertThat(r.getProviderMessageId()).isEqualTo(1L);
        assertThat(r.getDueAt()).isEqualTo(clock.instant().minusMillis(50));
        assertThat(r.getSentAt()).isEqualTo(clock.instant());
        assertThat(r.getResultAt()).isEqualTo(clock.instant());
        assertThat(r.getSenderInstance()).isEqualTo("test-1");
        assertThat(metrics.delivered()).isEqualTo(1);
    }

    @Test
    void a_refused_chat_is_rescheduled_at_exactly_the_returned_wait_without_a_call() {
        budget.decisions.add(Decision.refused(1234, Limit.CHAT));
        Step step = processor.process(pending("m1", "42"));
        assertThat(step).isEqualTo(new Step.RetryAt(now() + 1234));
        assertThat(transport.sent).isEmpty();
        assertThat(sink.results).isEmpty();
    }

    @Test
    void a_429_writes_a_penalty_gate_and_reschedules_at_retry_after_plus_one_sided_jitter() {
        transport.script("42", new SendOutcome.RetryAfter(Duration.ofSeconds(3), SendOutcome.PenaltyScope.CHAT, "x"));
        PendingMessage p = pending("m1", "42");
        Step step = processor.process(p);
        assertThat(budget.penalties).containsExactly("42:3000");
        assertThat(((Step.RetryAt) step).readyAtMs()).isBetween(now() + 3000, now() + 3200);
        assertThat(metrics.provider429()).isEqualTo(1);
        clock.advance(Duration.ofSeconds(4));
        assertThat(processor.process(p)).isEqualTo(Step.DONE);
        assertThat(sink.results).singleElement().satisfies(r -> {
            assertThat(r.getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
            assertThat(r.getAttempts()).isEqualTo(2);
        });
    }

    @Test
    void forbidden_is_blocked_and_other_4xx_is_failed() {
        transport.script("1", new SendOutcome.Blocked(403, "Forbidden: bot was blocked by the user"));
        transport.script("2", new SendOutcome.PermanentFailure(400, "Bad Request: chat not found"));
        processor.process(pending("a", "1"));
        processor.process(pending("b", "2"));
        assertThat(sink.results).extracting(DeliveryResult::getStatus)
                .containsExactly(DeliveryStatus.BLOCKED, DeliveryStatus.FAILED);
        assertThat(sink.results).extracting(DeliveryResult::getErrorCode).containsExactly(403, 400);
        assertThat(sink.results.get(1).getReason()).contains("chat not found");
    }

    @Test
    void transient_failures_back_off_with_full_jitter_under_the_cap_then_fail() {
        SendOutcome boom = new SendOutcome.TransientFailure(502, "Bad Gateway", false);
        transport.script("42", boom, boom, boom);
        PendingMessage p = pending("m1", "42");
        Step first = processor.process(p);
        assertThat(((Step.RetryAt) first).readyAtMs()).isBetween(now() + 1, now() + 100);
        Step second = processor.process(p);
        assertThat(((Step.RetryAt) second).readyAtMs()).isBetween(now() + 1, now() + 200);
        assertThat(processor.process(p)).isEqualTo(Step.DONE);
        assertThat(sink.results).singleElement().satisfies(r -> {
            assertThat(r.getStatus()).isEqualTo(DeliveryStatus.FAILED);
            assertThat(r.getAttempts()).isEqualTo(3);
            assertThat(r.getErrorCode()).isEqualTo(502);
        });
    }

    @Test
    void full_jitter_backoff_never_exceeds_the_cap() {
        for (int failures = 1; failures < 40; failures++) {
            assertThat(processor.fullJitterBackoffMs(failures)).isBetween(1L, 1000L);
        }
    }

    @Test
    void a_message_past_its_deadline_expires_without_spending_budget() {
        PendingMessage p = new PendingMessage(tp, 0, Fakes.message("m1", "42", clock.instant().minusSeconds(20),
                clock.instant().minusSeconds(1)));
        assertThat(processor.process(p)).isEqualTo(Step.DONE);
        assertThat(budget.calls).isZero();
        assertThat(sink.results.get(0).getStatus()).isEqualTo(DeliveryStatus.EXPIRED);
        assertThat(sink.results.get(0).getAttempts()).isZero();
    }

    @Test
    void a_wait_beyond_the_deadline_is_cut_to_the_deadline_where_the_message_expires() {
        Instant deadline = clock.instant().plusSeconds(10);
        transport.script("42", new SendOutcome.RetryAfter(Duration.ofSeconds(18_053), SendOutcome.PenaltyScope.CHAT,
                "Too Many Requests: retry after 18053"));
        PendingMessage p = new PendingMessage(tp, 0, Fakes.message("m1", "42", clock.instant(), deadline));
        assertThat(processor.process(p)).isEqualTo(new Step.RetryAt(deadline.toEpochMilli()));
        clock.setMillis(deadline.toEpochMilli());
        assertThat(processor.process(p)).isEqualTo(Step.DONE);
        assertThat(sink.results.get(0).getStatus()).isEqualTo(DeliveryStatus.EXPIRED);
    }

    @Test
    void an_unknown_bot_fails_with_a_reason_naming_it() {
        PendingMessage p = new PendingMessage(tp, 0, dev.sluice.avro.OutboundMessage.newBuilder(
                Fakes.message("m1", "42", clock.instant(), null)).setBotId("ghost").build());
        processor.process(p);
        assertThat(sink.results.get(0).getStatus()).isEqualTo(DeliveryStatus.FAILED);
        assertThat(sink.results.get(0).getReason()).contains("ghost");
    }
}
