package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.avro.DeliveryStatus;
import dev.sluice.sender.idempotency.InMemorySentMarks;
import dev.sluice.testkit.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * Lanes waiting for a bot slot: parked until their time limit on a manual clock, woken early (one per released
 * slot) in the order urgent, live, first parked, and never held twice (a lane waiting on several bots leaves every
 * index when it wakes). The last test drives the real {@link Dispatcher}, {@link BotSlots} and processor: a
 * released slot wakes the parked lane at once, with no time passing.
 */
class ParkedLanesTest {
    private final ManualClock clock = new ManualClock();
    private final Set<String> urgent = new java.util.HashSet<>();
    private final Set<String> backfill = new java.util.HashSet<>();
    private final ParkedLanes<String> parked = new ParkedLanes<>(urgent::contains, h -> !backfill.contains(h));

    private long at(long afterMs) {
        return clock.millis() + afterMs;
    }

    private List<String> wakeDue() {
        List<String> woken = new ArrayList<>();
        parked.wakeDue(clock.millis(), woken::add);
        return woken;
    }

    @Test
    void a_parked_lane_wakes_at_its_time_limit_and_not_before() {
        parked.park("a", Set.of("bot"), at(500));
        parked.park("b", Set.of("bot"), at(200));
        parked.park("forever", Set.of("bot"), Long.MAX_VALUE);

        assertThat(parked.wakeDue(clock.millis(), h -> { })).as("the next limit").isEqualTo(at(200));
        clock.advance(Duration.ofMillis(199));
        assertThat(wakeDue()).isEmpty();
        clock.advance(Duration.ofMillis(1));
        assertThat(wakeDue()).containsExactly("b");
        clock.advance(Duration.ofMillis(300));
        assertThat(wakeDue()).containsExactly("a");
        clock.advance(Duration.ofDays(365));
        assertThat(wakeDue()).as("no time limit: only a released slot wakes it").isEmpty();
        assertThat(parked.size()).isEqualTo(1);
        assertThat(parked.wakeOne("bot")).isEqualTo("forever");
        assertThat(parked.size()).isZero();
    }

    @Test
    void a_released_slot_wakes_one_lane_early_and_the_time_limit_does_not_wake_it_again() {
        parked.park("a", Set.of("bot"), at(10_000));
        parked.park("b", Set.of("bot"), at(10_000));

        assertThat(parked.wakeOne("bot")).isEqualTo("a");
        assertThat(parked.size()).as("one lane per released slot").isEqualTo(1);
        assertThat(parked.wakeOne("other")).as("no lane waits for that bot").isNull();
        clock.advance(Duration.ofSeconds(10));
        assertThat(wakeDue()).containsExactly("b");
        assertThat(parked.wakeOne("bot")).isNull();
    }

    @Test
    void a_released_slot_wakes_the_first_urgent_lane_else_the_first_live_lane_else_the_first() {
        backfill.addAll(List.of("backfill-1", "backfill-2"));
        urgent.add("urgent");
        parked.park("backfill-1", Set.of("bot"), Long.MAX_VALUE);
        parked.park("live", Set.of("bot"), Long.MAX_VALUE);
        parked.park("urgent", Set.of("bot"), Long.MAX_VALUE);
        parked.park("backfill-2", Set.of("bot"), Long.MAX_VALUE);

        assertThat(parked.wakeOne("bot")).isEqualTo("urgent");
        assertThat(parked.wakeOne("bot")).isEqualTo("live");
        assertThat(parked.wakeOne("bot")).isEqualTo("backfill-1");
        assertThat(parked.wakeOne("bot")).isEqualTo("backfill-2");
    }

    @Test
    void a_lane_waiting_on_several_bots_is_held_once_and_leaves_every_index_when_woken() {
        parked.park("pool", Set.of("b1", "b2", "b3"), at(1_000));
        assertThat(parked.size()).isEqualTo(1);
        assertThat(parked.indexEntries()).as("three bots and a time limit").isEqualTo(4);

        assertThat(parked.wakeOne("b2")).isEqualTo("pool");
        assertThat(parked.indexEntries()).as("nothing left behind in b1's, b3's or the time index").isZero();
        assertThat(parked.wakeOne("b1")).as("not woken twice").isNull();
        clock.advance(Duration.ofSeconds(1));
        assertThat(wakeDue()).isEmpty();
        assertThatThrownBy(() -> {
            parked.park("x", Set.of("b1"), Long.MAX_VALUE);
            parked.park("x", Set.of("b2"), Long.MAX_VALUE);
        }).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void the_size_stays_bounded_by_the_lanes_parked_now_over_many_park_and_wake_cycles() {
        for (int round = 0; round < 10_000; round++) {
            String lane = "lane-" + (round % 50);
            parked.park(lane, Set.of("b1", "b2"), round % 2 == 0 ? at(10) : Long.MAX_VALUE);
            if (round % 3 == 0) {
                clock.advance(Duration.ofMillis(10));
                wakeDue();
            }
            if (parked.size() == 50 || round % 5 == 0) {
                while (parked.wakeOne(round % 2 == 0 ? "b1" : "b2") != null) {
                    // drain
                }
            }
            assertThat(parked.size()).isLessThanOrEqualTo(50);
        }
        assertThat(parked.indexEntries()).isLessThanOrEqualTo(parked.size() * 3);
        parked.forget(h -> true);
        assertThat(parked.size()).isZero();
        assertThat(parked.indexEntries()).as("forgotten lanes (revoked partition) leave every index").isZero();
    }

    @Test
    void with_the_real_dispatcher_a_released_bot_slot_wakes_the_parked_lane_at_once() {
        BotSlots slots = new BotSlots(1);
        Fakes.RecordingSink sink = new Fakes.RecordingSink();
        SenderConfig config = Fakes.config("sender.max.in.flight.per.bot", "1");
        DeliveryProcessor processor = new DeliveryProcessor(config, new Fakes.ScriptedBudget(),
                new Fakes.ScriptedTransport(), sink, new InMemorySentMarks(Duration.ofDays(1), clock),
                Fakes.metrics(new SimpleMeterRegistry()), clock, new SplittableRandom(1), slots, new ChatRegistry(100));
        Lanes lanes = new Lanes(new LaneScheduler<>(processor::isUrgent, PendingMessage::waitsForTurnOnly));
        ArrayDeque<Runnable> sending = new ArrayDeque<>();
        Dispatcher dispatcher = new Dispatcher(lanes, processor, slots, sending::add, clock, config);
        slots.onRelease(dispatcher::slotReleased);

        assertThat(slots.tryAcquire("bot")).as("another call holds the bot's one slot").isTrue();
        lanes.add(new PendingMessage(new TopicPartition("outbox.live", 0), 0,
                Fakes.message("m", "42", clock.instant(), null)), clock.millis());
        long next = dispatcher.dispatchDue(clock.millis());
        runAll(sending);
        assertThat(sink.results).isEmpty();
        assertThat(dispatcher.parkedLanes()).as("parked on the full bot").isEqualTo(1);
        assertThat(dispatcher.dispatchDue(clock.millis())).as("nothing to do until a slot is released")
                .isEqualTo(Long.MAX_VALUE);
        assertThat(next).as("its head was handed out: nothing else to wait for").isEqualTo(Long.MAX_VALUE);

        slots.release("bot"); // the other call ended
        assertThat(dispatcher.parkedLanes()).isZero();
        assertThat(dispatcher.dispatchDue(clock.millis())).isEqualTo(Long.MAX_VALUE);
        runAll(sending);
        assertThat(sink.results).hasSize(1).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
        assertThat(lanes.buffered()).isZero();
        assertThat(lanes.backlog("bot")).isZero();
    }

    private static void runAll(ArrayDeque<Runnable> queue) {
        Runnable r;
        while ((r = queue.poll()) != null) {
            r.run();
        }
    }
}
