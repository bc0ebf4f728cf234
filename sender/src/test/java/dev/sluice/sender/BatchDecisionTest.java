package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.testkit.ManualClock;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.NotificationClass;
import dev.sluice.sender.budget.BudgetRequest;
import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.Limit;
import dev.sluice.sender.idempotency.InMemorySentMarks;
import dev.sluice.sender.idempotency.SentMarks;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * The sender's batch decision against a budget that, like the Redis one, reads the sent marks of the same
 * store in its decision and may reserve slots: one budget call per batch, no separate sent-mark read, a message
 * already marked sent is never sent again, a reserved slot is waited for and then used without asking again.
 */
class BatchDecisionTest {
    private static final String URL = "redis://marks-and-budget:6379";

    private final ManualClock clock = new ManualClock();
    private final Fakes.ScriptedTransport transport = new Fakes.ScriptedTransport();
    private final Fakes.RecordingSink sink = new Fakes.RecordingSink();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final InMemorySentMarks stored = new InMemorySentMarks(Duration.ofDays(1), clock);
    private final CountingMarks marks = new CountingMarks();
    private final RedisLikeBudget budget = new RedisLikeBudget();
    private final TopicPartition tp = new TopicPartition("outbox.live", 0);
    private final DeliveryProcessor processor = new DeliveryProcessor(Fakes.config("budget.global.rate.per.s", "1000",
            "budget.global.burst", "1000", "budget.chat.rate.per.s", "1000", "budget.chat.burst", "1000",
            "budget.reservation.max.ms", "500", "budget.reservation.routine.max.ms", "500"), budget, transport, sink,
            marks, Fakes.metrics(registry), clock,
            new SplittableRandom(7), new BotSlots(8), new ChatRegistry(1000));

    /** Decides like budget.lua: one call per batch; a request naming its message gets its mark checked. */
    private static final class RedisLikeBudget extends Fakes.SharedBudgetFake {
        final Deque<Decision> decisions = new ArrayDeque<>();
        final List<List<BudgetRequest>> batches = new ArrayList<>();
        boolean routineShort = true;

        @Override
        public boolean routineHorizonShort(String botId) {
            return routineShort;
        }

        @Override
        public Decision tryAcquire(BudgetRequest request) {
            return tryAcquireAll(request.botId(), List.of(request)).get(0);
        }

        @Override
        public List<Decision> tryAcquireAll(String botId, List<BudgetRequest> requests) {
            batches.add(List.copyOf(requests));
            List<Decision> out = new ArrayList<>();
            for (BudgetRequest r : requests) {
                Decision d = decisions.isEmpty() ? Decision.grant() : decisions.poll();
                out.add(r.sentMarkId() != null && d.limit() != Limit.ALREADY_SENT ? d.withSentMarkChecked() : d);
            }
            return out;
        }

        @Override
        public Optional<String> sentMarksRedisUrl() {
            return Optional.of(URL);
        }

        @Override
        public boolean reserves() {
            return true;
        }

        final List<Long> lateAnswers = new ArrayList<>();

        @Override
        public void reportLateAnswer(String botId, long grantSeq) {
            lateAnswers.add(grantSeq);
        }
    }

    /** The in-memory marks, said to live in the budget's Redis; counts separate reads. */
    private final class CountingMarks implements SentMarks {
        int reads;

        @Override
        public Mark get(String botId, String messageId) {
            reads++;
            return stored.get(botId, messageId);
        }

        @Override
        public void markSent(String botId, String messageId, String status, Long providerMessageId) {
            stored.markSent(botId, messageId, status, providerMessageId);
        }

        @Override
        public void markResultWritten(String botId, String messageId, String resultKey) {
            stored.markResultWritten(botId, messageId, resultKey);
        }

        @Override
        public Optional<String> redisUrl() {
            return Optional.of(URL);
        }

        @Override
        public void close() {
        }
    }

    private PendingMessage pending(String id, String chat) {
        return new PendingMessage(tp, 0, Fakes.message(id, chat, clock.instant().minusMillis(50), null));
    }

    @Test
    void ready_heads_of_one_bot_are_decided_in_one_budget_call_that_also_checks_their_sent_marks() {
        List<PendingMessage> batch = List.of(pending("a", "1"), pending("b", "2"), pending("c", "3"));
        List<DeliveryProcessor.Next> next = processor.processBatch("bot", batch);

        assertThat(budget.batches).hasSize(1);
        assertThat(budget.batches.get(0)).extracting(BudgetRequest::sentMarkId).containsExactly("a", "b", "c");
        assertThat(budget.batches.get(0)).extracting(BudgetRequest::chatId).containsExactly("1", "2", "3");
        assertThat(next).allMatch(DeliveryProcessor.Next::isCall);
        next.forEach(n -> assertThat(n.run()).isEqualTo(Step.DONE));
        assertThat(transport.sent).hasSize(3);
        assertThat(sink.results).extracting(DeliveryResult::getStatus).containsOnly(DeliveryStatus.DELIVERED);
        assertThat(marks.reads).as("no separate sent-mark read").isZero();

        // checked once per message: asked again (a refusal), it does not ask for the mark again
        PendingMessage d = pending("d", "4");
        budget.decisions.add(Decision.refused(5, Limit.CHAT));
        assertThat(processor.process(d)).isInstanceOf(Step.RetryAt.class);
        clock.advance(Duration.ofMillis(5));
        assertThat(processor.process(d)).isEqualTo(Step.DONE);
        assertThat(budget.batches.get(budget.batches.size() - 1).get(0).sentMarkId()).isNull();
    }

    @Test
    void while_the_poll_lease_is_stale_nothing_is_asked_and_nothing_granted_before_is_sent() {
        long[] nanos = {0};
        PollLease lease = new PollLease(Duration.ofSeconds(3), () -> nanos[0]);
        processor.pollLease(lease);
        // granted while the lease held; the process then stops for longer than the lease before the call runs
        List<DeliveryProcessor.Next> granted = processor.processBatch("bot", List.of(pending("a", "1")));
        assertThat(granted.get(0).isCall()).isTrue();
        nanos[0] += Duration.ofSeconds(10).toNanos();
        assertThat(granted.get(0).run()).as("the call held back").isInstanceOf(Step.RetryAt.class);
        assertThat(transport.sent).isEmpty();
        // asked while stale: no budget call at all (a grant not used would cost the bot's shared rate)
        int calls = budget.batches.size();
        assertThat(processor.processBatch("bot", List.of(pending("b", "2"))).get(0).run()).isInstanceOf(Step.RetryAt.class);
        assertThat(budget.batches).hasSize(calls);
        // a poll returning now does not renew it; a commit the group accepted does
        assertThat(lease.renewIfHeld()).isFalse();
        lease.renewAt(nanos[0]);
        assertThat(processor.processBatch("bot", List.of(pending("b", "2"))).get(0).run()).isEqualTo(Step.DONE);
        assertThat(transport.sent).hasSize(1);
        assertThat(lease.renewIfHeld()).isTrue();
    }

    @Test
    void a_message_the_budget_finds_marked_sent_is_not_sent_again_and_gets_the_result_of_its_previous_owner() {
        budget.decisions.add(Decision.alreadySent("SENT|DELIVERED|42|0|"));
        budget.decisions.add(Decision.alreadySent("DONE|DELIVERED|42"));
        List<DeliveryProcessor.Next> next = processor.processBatch("bot", List.of(pending("sent", "1"), pending("done", "2")));

        assertThat(next).noneMatch(DeliveryProcessor.Next::isCall);
        assertThat(next.get(0).run()).isEqualTo(Step.DONE);
        assertThat(next.get(1).run()).isEqualTo(Step.DONE);
        assertThat(transport.sent).isEmpty();
        assertThat(sink.results).hasSize(1);
        assertThat(sink.results.get(0).getMessageId()).isEqualTo("sent");
        assertThat(sink.results.get(0).getStatus()).isEqualTo(DeliveryStatus.DELIVERED);
        assertThat(sink.results.get(0).getProviderMessageId()).isEqualTo(42L);
        assertThat(sink.alreadyFinished).containsExactly("done");
    }

    @Test
    void a_critical_message_asks_as_urgent_and_every_live_lane_carries_the_full_horizon() {
        DeliveryProcessor defaults = tenPerSecond("budget.reservation.routine.max.ms", "100");
        PendingMessage critical = new PendingMessage(tp, 0, Fakes.message("c", "1", clock.instant().minusMillis(50),
                null));
        critical.message().setEventClass(NotificationClass.CRITICAL);
        defaults.processBatch("bot", List.of(critical, pending("r", "2")));
        assertThat(budget.batches).hasSize(1);
        // the budget holds the routine one to 100 ms while the bot serves critical work (budget.lua, BudgetRedisIT)
        assertThat(budget.batches.get(0)).extracting(BudgetRequest::reserveUpTo)
                .containsExactly(Duration.ofMillis(500), Duration.ofMillis(500));
        assertThat(budget.batches.get(0)).extracting(BudgetRequest::urgent).containsExactly(true, false);
    }

    @Test
    void a_routine_lane_refused_by_the_global_limit_waits_for_the_window_of_the_horizon_its_bot_gets() {
        for (boolean shortHorizon : new boolean[] {true, false}) {
            budget.routineShort = shortHorizon;
            DeliveryProcessor defaults = tenPerSecond("budget.reservation.routine.max.ms", "100");
            budget.decisions.add(Decision.refused(1_000, Limit.GLOBAL)); // all slots within the horizon taken
            Step step = defaults.process(pending("r-" + shortHorizon, "1"));
            long readyAt = ((Step.RetryAt) step).readyAtMs();
            long window = shortHorizon ? 50 : 250;
            assertThat(readyAt % window).as("aligned to half the horizon (short %s)", shortHorizon).isZero();
            // asks again once the horizon it gets reaches the slot: 1000 - 100 (short) or 1000 - 500
            long askAgain = clock.millis() + 1_000 - (shortHorizon ? 100 : 500);
            assertThat(readyAt).isBetween(askAgain, askAgain + window);
        }
    }

    @Test
    void a_reserved_slot_is_waited_for_then_used_without_asking_the_budget_again() {
        PendingMessage p = pending("r", "1");
        budget.decisions.add(Decision.reserved(300));
        Step step = processor.process(p);
        assertThat(step).isEqualTo(new Step.RetryAt(clock.millis() + 300));
        assertThat(budget.batches.get(0).get(0).reserveUpTo()).isEqualTo(Duration.ofMillis(500));
        assertThat(transport.sent).isEmpty();

        clock.advance(Duration.ofMillis(100));
        assertThat(processor.process(p)).as("never before its slot").isEqualTo(new Step.RetryAt(clock.millis() + 200));
        clock.advance(Duration.ofMillis(200));
        assertThat(processor.process(p)).isEqualTo(Step.DONE);
        assertThat(transport.sent).hasSize(1);
        assertThat(budget.batches).as("no second budget call").hasSize(1);
    }

    @Test
    void a_reserved_slot_missed_by_more_than_one_interval_passes_unused_and_the_message_asks_again() {
        PendingMessage p = pending("late", "1");
        budget.decisions.add(Decision.reserved(300));
        processor.process(p);
        clock.advance(Duration.ofMillis(300 + 50));
        assertThat(processor.process(p)).isEqualTo(Step.DONE);
        assertThat(budget.batches).as("asked again for a fresh slot").hasSize(2);
        assertThat(transport.sent).hasSize(1);
    }

    /** A processor at 10 msg/s (one interval = 100 ms) with reservations and these extra settings. */
    private DeliveryProcessor tenPerSecond(String... extra) {
        List<String> kv = new ArrayList<>(List.of("budget.global.rate.per.s", "10", "budget.chat.rate.per.s", "1000",
                "budget.chat.burst", "1000", "budget.reservation.max.ms", "500",
                "budget.reservation.routine.max.ms", "500"));
        kv.addAll(List.of(extra));
        return new DeliveryProcessor(Fakes.config(kv.toArray(String[]::new)), budget, transport, sink, marks,
                Fakes.metrics(registry), clock, new SplittableRandom(7), new BotSlots(8), new ChatRegistry(1000));
    }

    @Test
    void a_reserved_slot_later_than_the_configured_late_max_passes_unused_and_is_counted() {
        DeliveryProcessor strict = tenPerSecond("budget.reservation.late.max.ms", "3");
        PendingMessage late = pending("late", "1");
        budget.decisions.add(Decision.reserved(300));
        strict.process(late);
        clock.advance(Duration.ofMillis(300 + 4)); // 4 ms late: within one interval (100 ms), over the 3 ms
        assertThat(strict.process(late)).isEqualTo(Step.DONE);
        assertThat(budget.batches).as("asked again for a fresh slot").hasSize(2);
        assertThat(Fakes.count(registry, "sluice.budget.slots.forfeited", "bot", "bot")).isEqualTo(1);

        DeliveryProcessor another = tenPerSecond("budget.reservation.late.max.ms", "3"); // its own local pacer
        PendingMessage onTime = pending("on-time", "2");
        budget.decisions.add(Decision.reserved(300));
        another.process(onTime);
        clock.advance(Duration.ofMillis(300 + 3)); // exactly the late max: still used
        assertThat(another.process(onTime)).isEqualTo(Step.DONE);
        assertThat(budget.batches).as("no new budget call").hasSize(3);
        assertThat(Fakes.count(registry, "sluice.budget.slots.forfeited", "bot", "bot")).isEqualTo(1);
        assertThat(transport.sent).hasSize(2);
    }

    @Test
    void with_the_arrival_guard_an_answer_later_than_the_slack_after_its_slot_is_reported_to_the_budget() {
        // 29.8/s against a provider limit of 30 per second: 31 grants span 30 x 33.56 ms, 6.71 ms more than a second
        DeliveryProcessor guarded = new DeliveryProcessor(Fakes.config("budget.global.rate.per.s", "29.8",
                "budget.chat.rate.per.s", "1000", "budget.chat.burst", "1000", "budget.reservation.max.ms", "500",
                "budget.arrival.guard.limit.per.s", "30", "budget.global.arrival.margin.ms", "0"), budget, transport, sink, marks, Fakes.metrics(registry), clock,
                new SplittableRandom(7), new BotSlots(8), new ChatRegistry(1000));
        long[] answerAfterMs = {6};
        transport.clockMs = chat -> {
            clock.advance(Duration.ofMillis(answerAfterMs[0])); // the provider's answer takes this long
            return clock.millis();
        };
        budget.decisions.add(Decision.grant().withGrantSeq(41));
        assertThat(guarded.process(pending("quick", "1"))).isEqualTo(Step.DONE);
        assertThat(budget.lateAnswers).as("answered within the slack").isEmpty();

        answerAfterMs[0] = 8;
        clock.advance(Duration.ofSeconds(1)); // past the local pacer's next turn
        budget.decisions.add(Decision.grant().withGrantSeq(42));
        assertThat(guarded.process(pending("slow", "2"))).isEqualTo(Step.DONE);
        assertThat(budget.lateAnswers).as("8 ms > 6.71 ms: the call may have arrived that late").containsExactly(42L);
        assertThat(Fakes.count(registry, "sluice.budget.late.answers", "bot", "bot")).isEqualTo(1);

        // a reserved slot counts from its instant, not from the grant
        answerAfterMs[0] = 5;
        clock.advance(Duration.ofSeconds(1));
        PendingMessage reserved = pending("reserved", "3");
        budget.decisions.add(Decision.reserved(300).withGrantSeq(43));
        guarded.process(reserved);
        clock.advance(Duration.ofMillis(300));
        assertThat(guarded.process(reserved)).isEqualTo(Step.DONE);
        assertThat(budget.lateAnswers).containsExactly(42L);
        assertThat(transport.sent).hasSize(3);
    }

    @Test
    void without_a_late_max_a_reserved_slot_may_be_late_by_one_interval_of_the_bot_rate() {
        DeliveryProcessor lenient = tenPerSecond();
        PendingMessage p = pending("p", "1");
        budget.decisions.add(Decision.reserved(300));
        lenient.process(p);
        clock.advance(Duration.ofMillis(300 + 99));
        assertThat(lenient.process(p)).isEqualTo(Step.DONE);
        assertThat(budget.batches).as("the slot was used").hasSize(1);
        assertThat(Fakes.count(registry, "sluice.budget.slots.forfeited", "bot", "bot")).isZero();
    }

    @Test
    void a_live_critical_message_asks_the_budget_at_once_instead_of_queueing_for_a_pacer_slot() {
        DeliveryProcessor tenPerS = tenPerSecond("budget.reservation.max.ms", "0");
        List<Step> routine = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            routine.add(tenPerS.process(pending("routine-" + i, "r" + i)));
        }
        // the first routine message asked and was sent; the others wait for pacer slots up to ~2 s ahead
        assertThat(routine.get(0)).isEqualTo(Step.DONE);
        assertThat(routine.get(19)).isInstanceOf(Step.RetryAt.class);
        assertThat(((Step.RetryAt) routine.get(19)).readyAtMs()).isGreaterThan(clock.millis() + 1_500);
        int asked = budget.batches.size();

        PendingMessage reminder = pending("reminder", "c");
        reminder.message().setEventClass(dev.sluice.avro.NotificationClass.CRITICAL);
        assertThat(tenPerS.isUrgent(reminder)).isTrue();
        budget.decisions.add(Decision.refused(37, Limit.GLOBAL));
        assertThat(tenPerS.process(reminder)).as("refused: asks again exactly when the budget admits")
                .isEqualTo(new Step.RetryAt(clock.millis() + 37));
        assertThat(budget.batches).as("it asked without a pacer slot").hasSize(asked + 1);
        clock.advance(Duration.ofMillis(37));
        assertThat(tenPerS.process(reminder)).isEqualTo(Step.DONE);
        assertThat(transport.sent).hasSize(2);

        PendingMessage ahead = pending("routine-before-a-reminder", "e");
        ahead.aheadOfUrgent(true); // its lane holds a reminder behind it: priority inheritance
        assertThat(tenPerS.process(ahead)).as("asks at once, so the reminder behind it is not held up")
                .isEqualTo(Step.DONE);
        assertThat(transport.sent).hasSize(3);

        PendingMessage backfilled = new PendingMessage(new TopicPartition("outbox.backfill", 0), 0,
                Fakes.message("old-reminder", "d", clock.instant(), null));
        backfilled.message().setEventClass(dev.sluice.avro.NotificationClass.CRITICAL);
        assertThat(tenPerS.isUrgent(backfilled)).as("backfill stays behind live traffic").isFalse();
    }

    @Test
    void a_reserved_send_handed_to_a_sending_thread_too_late_still_passes_unused() {
        DeliveryProcessor strict = tenPerSecond("budget.reservation.late.max.ms", "3");
        PendingMessage p = pending("handed-late", "1");
        budget.decisions.add(Decision.reserved(300));
        strict.process(p);
        clock.advance(Duration.ofMillis(300));
        DeliveryProcessor.Next next = strict.processBatch("bot", List.of(p)).get(0);
        assertThat(next.isCall()).as("on time at the check").isTrue();
        clock.advance(Duration.ofMillis(5)); // the sending thread ran 5 ms later
        assertThat(next.run()).isEqualTo(new Step.RetryAt(clock.millis()));
        assertThat(transport.sent).isEmpty();
        assertThat(Fakes.count(registry, "sluice.budget.slots.forfeited", "bot", "bot")).isEqualTo(1);
    }
}
