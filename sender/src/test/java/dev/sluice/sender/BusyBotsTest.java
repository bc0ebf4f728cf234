package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.sender.budget.Decision;
import dev.sluice.sender.budget.Limit;
import dev.sluice.sender.idempotency.InMemorySentMarks;
import dev.sluice.testkit.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * Issue 19, round trips: the bot's "not before" hint ({@link BusyBots}) learned from the shared budget's answers. With
 * the real {@link Dispatcher} on a manual clock and a budget that decides like the shared GCRA (30/s, burst 1) while
 * another replica spends the bot: a lane of a bot known busy until T does not ask before T, the lanes deferred to T
 * are decided by one budget call, and nothing is sent that the budget did not grant, when it granted it.
 */
class BusyBotsTest {
    private static final long INTERVAL_US = 33_333;

    private final ManualClock clock = new ManualClock();
    private final Fakes.ScriptedTransport transport = new Fakes.ScriptedTransport();
    private final Fakes.RecordingSink sink = new Fakes.RecordingSink();
    private final Lanes lanes = new Lanes(new LaneScheduler<>());
    private final ArrayDeque<Runnable> sending = new ArrayDeque<>();
    private final BotSlots slots = new BotSlots(8);
    private final Fakes.GcraBudget budget = new Fakes.GcraBudget(clock, INTERVAL_US, false);
    private final TopicPartition tp = new TopicPartition("outbox.live", 0);
    private final long t0 = clock.millis();

    private DeliveryProcessor processor() {
        transport.clockMs = c -> clock.millis();
        return new DeliveryProcessor(Fakes.config("budget.global.rate.per.s", "30", "budget.global.burst", "1",
                "budget.global.arrival.margin.ms", "0"), budget,
                transport, sink, new InMemorySentMarks(Duration.ofDays(1), clock), Fakes.metrics(new SimpleMeterRegistry()),
                clock, new SplittableRandom(3), slots, new ChatRegistry(1000));
    }

    private void add(String id, String chat) {
        lanes.add(new PendingMessage(tp, 0, Fakes.message(id, chat, clock.instant(), null)), clock.millis());
    }

    /**
     * One dispatcher round at the clock's time, its sending work run on this thread; returns when to look again, or
     * the clock's time when work ran (its steps may have made lanes ready).
     */
    private long round(Dispatcher dispatcher) {
        long next = dispatcher.dispatchDue(clock.millis());
        if (sending.isEmpty()) {
            return next;
        }
        Runnable r;
        while ((r = sending.poll()) != null) {
            r.run();
        }
        return clock.millis();
    }

    @Test
    void lanes_of_a_bot_known_busy_wait_for_the_hint_without_asking_and_are_then_decided_by_one_budget_call() {
        DeliveryProcessor processor = processor();
        Dispatcher dispatcher = new Dispatcher(lanes, processor, slots, sending::add, clock,
                Fakes.config("budget.global.rate.per.s", "30", "budget.global.burst", "1",
                "budget.global.arrival.margin.ms", "0"));
        slots.onRelease(dispatcher::slotReleased);
        add("x", "X");
        add("b", "B");
        add("c", "C");
        add("d", "D");
        // t0: one batch; x asks and is granted, b, c, d take this instance's pacer slots at +34, +67, +100 ms
        round(dispatcher);
        assertThat(budget.callChats).containsExactly(List.of("X"));
        assertThat(transport.sent).containsExactly("X/text x");
        // meanwhile another replica spends the bot's budget until t0 + 334 ms
        budget.tatMicros = (t0 + 334) * 1000;

        while (lanes.buffered() > 0) {
            long next = round(dispatcher);
            assertThat(next).as("lanes wait for a time; nothing is stuck").isNotEqualTo(Long.MAX_VALUE);
            if (next > clock.millis()) {
                clock.setMillis(next);
            }
        }

        // (a) b asked at +34 and learned "not before +334": c (+67) and d (+100) did not ask before then
        assertThat(budget.callsAtMs.subList(0, 3)).containsExactly(t0, t0 + 34, t0 + 334);
        // (b) the three lanes deferred to +334 were decided by one budget call
        assertThat(budget.callChats.get(2)).containsExactlyInAnyOrder("B", "C", "D");
        // (c) the budget still decides: each message was sent at the instant the budget granted it, never earlier, and
        // only once; the global limit (30/s, burst 1) holds between consecutive sends
        assertThat(sink.results).hasSize(4);
        assertThat(transport.sent).hasSize(4);
        for (int i = 0; i < transport.sent.size(); i++) {
            String chat = transport.sent.get(i).substring(0, 1);
            assertThat(budget.slotsMs.get(chat)).as("grants of chat %s", chat)
                    .containsExactly(transport.sentAt.get(i));
            if (i > 0) {
                assertThat(transport.sentAt.get(i) - transport.sentAt.get(i - 1)).isGreaterThanOrEqualTo(33);
            }
        }
        assertThat(transport.sentAt.get(1)).isGreaterThanOrEqualTo(t0 + 334);
        int asks = budget.callChats.stream().mapToInt(List::size).sum();
        assertThat(budget.callsAtMs).as("budget calls for 4 messages (%d requests)", asks).hasSizeLessThanOrEqualTo(5);
    }

    @Test
    void a_hint_passes_but_the_budget_refuses_again_so_the_message_waits_for_its_grant() {
        DeliveryProcessor processor = processor();
        PendingMessage first = new PendingMessage(tp, 0, Fakes.message("first", "1", clock.instant(), null));
        PendingMessage other = new PendingMessage(tp, 0, Fakes.message("other", "2", clock.instant(), null));
        budget.tatMicros = (t0 + 200) * 1000; // the bot is busy until +200 ms (other replicas)
        other.holdAttemptSlot(); // a lane that took its pacer slot before anything was learned

        assertThat(processor.process(first)).isEqualTo(new Step.RetryAt(t0 + 200));
        assertThat(budget.callsAtMs).hasSize(1);
        clock.advance(Duration.ofMillis(50));
        assertThat(processor.process(other)).as("known busy: no round trip before the hint")
                .isEqualTo(new Step.RetryAt(t0 + 200));
        assertThat(budget.callsAtMs).hasSize(1);

        // at the hint another replica took the slot first: the budget refuses, nothing is sent
        clock.setMillis(t0 + 200);
        budget.tatMicros = (t0 + 230) * 1000;
        Step step = processor.process(other);
        assertThat(step).isInstanceOf(Step.RetryAt.class);
        assertThat(transport.sent).isEmpty();
        assertThat(budget.callsAtMs).hasSize(2);
        clock.setMillis(((Step.RetryAt) step).readyAtMs());
        assertThat(processor.process(other)).isEqualTo(Step.DONE);
        assertThat(transport.sent).containsExactly("2/text other");
        assertThat(budget.slotsMs.get("2")).containsExactly(clock.millis());
    }

    @Test
    void hints_come_from_global_refusals_only_and_are_bounded() {
        BusyBots none = new BusyBots(Fakes.config().budgetConfig(), 0);
        none.learn("bot", 1000, List.of(Decision.grant(), Decision.refused(50, Limit.CHAT),
                Decision.refused(70, Limit.HEADROOM), Decision.refused(90, Limit.GATE_CHAT)));
        assertThat(none.notBeforeMs("bot", 1000)).as("a grant, chat, headroom or chat-gate answer teaches nothing")
                .isZero();

        BusyBots busy = new BusyBots(Fakes.config().budgetConfig(), 0);
        busy.learn("bot", 1000, List.of(Decision.refused(40, Limit.GLOBAL)));
        assertThat(busy.notBeforeMs("bot", 1000)).isEqualTo(1040);
        assertThat(busy.notBeforeMs("other", 1000)).isZero();
        busy.learn("bot", 1010, List.of(Decision.refused(10, Limit.GLOBAL)));
        assertThat(busy.notBeforeMs("bot", 1010)).as("only ever later").isEqualTo(1040);
        assertThat(busy.notBeforeMs("bot", 1040)).as("passed: forgotten").isZero();

        busy.learn("bot", 2000, List.of(Decision.refused(60_000, Limit.GLOBAL)));
        assertThat(busy.notBeforeMs("bot", 2000)).as("bounded").isEqualTo(2000 + BusyBots.MAX_HINT_MS);
        busy.learn("bot", 2001, List.of(Decision.refused(5, Limit.GATE_BOT)));
        assertThat(busy.notBeforeMs("bot", 2001)).as("a bot-wide gate governs instead").isZero();

        BusyBots reserving = new BusyBots(Fakes.config("budget.arrival.guard.limit.per.s", "0").budgetConfig(), 500);
        reserving.learn("bot", 1000, List.of(Decision.refused(700, Limit.GLOBAL)));
        assertThat(reserving.notBeforeMs("bot", 1000)).as("a reservation may take a slot up to the horizon ahead")
                .isEqualTo(1200);
        reserving.learn("b1", 1000, List.of(Decision.refused(400, Limit.GLOBAL)));
        assertThat(reserving.notBeforeMs("b1", 1000)).isZero();

        BusyBots guarded = new BusyBots(Fakes.config().budgetConfig(), 500); // the guard is on (30) by default
        guarded.learn("bot", 1000, List.of(Decision.refused(900, Limit.GLOBAL)));
        assertThat(guarded.notBeforeMs("bot", 1000)).as("guard floors lengthen the wait: nothing learned").isZero();
    }
}
