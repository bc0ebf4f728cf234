package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.sender.idempotency.InMemorySentMarks;
import dev.sluice.testkit.ManualClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * Issue 19, item 3: with reservations on ({@code budget.reservation.max.ms}) the ready heads of one bot are decided
 * together, even when every in-flight place is taken ({@code sender.max.in.flight} 1 here, as on a loaded sender where
 * places free one at a time): one budget call reserves the bot's next slots for several heads. With the real
 * {@link Dispatcher} on a manual clock and a budget that decides like budget.lua's global GCRA (30/s, burst 1) with
 * reservations up to the horizon: the heads waiting for the same instant are decided by one call, each message is sent
 * at or after the slot it was granted and never before, and each chat's messages go in order.
 */
class ReservedBatchTest {
    private static final long INTERVAL_US = 33_334;
    private static final String[] CONFIG = {"budget.global.rate.per.s", "30", "budget.global.burst", "1",
            "budget.reservation.max.ms", "500", "budget.reservation.routine.max.ms", "500",
            "sender.max.in.flight", "1"};

    private final ManualClock clock = new ManualClock(); // 2026-01-01T00:00:00Z: a multiple of the 250 ms window
    private final Fakes.ScriptedTransport transport = new Fakes.ScriptedTransport();
    private final Fakes.RecordingSink sink = new Fakes.RecordingSink();
    private final ArrayDeque<Runnable> sending = new ArrayDeque<>();
    private final BotSlots slots = new BotSlots(8);
    private final Fakes.GcraBudget budget = new Fakes.GcraBudget(clock, INTERVAL_US, true);
    private final TopicPartition tp = new TopicPartition("outbox.live", 0);
    private final long t0 = clock.millis();

    private Dispatcher dispatcher(Lanes lanes) {
        transport.clockMs = c -> clock.millis();
        DeliveryProcessor processor = new DeliveryProcessor(Fakes.config(CONFIG), budget, transport, sink,
                new InMemorySentMarks(Duration.ofDays(1), clock), Fakes.metrics(new SimpleMeterRegistry()), clock,
                new SplittableRandom(3), slots, new ChatRegistry(1000));
        Dispatcher dispatcher = new Dispatcher(lanes, processor, slots, sending::add, clock, Fakes.config(CONFIG));
        slots.onRelease(dispatcher::slotReleased);
        return dispatcher;
    }

    /** The lanes as SenderWiring builds them with reservations on: indexed by their head's bot. */
    private static Lanes lanes() {
        return new Lanes(new LaneScheduler<PendingMessage>(m -> false, PendingMessage::waitsForTurnOnly,
                PendingMessage::batchBot, PendingMessage::holdsReservation));
    }

    private void add(Lanes lanes, String id, String chat) {
        lanes.add(new PendingMessage(tp, 0, Fakes.message(id, chat, clock.instant(), null)), clock.millis());
    }

    /** Rounds of the dispatcher on the manual clock, each round's sending work run on this thread, until all is sent. */
    private void drain(Lanes lanes, Dispatcher dispatcher) {
        for (int rounds = 0; lanes.buffered() > 0; rounds++) {
            assertThat(rounds).as("bounded").isLessThan(10_000);
            long next = dispatcher.dispatchDue(clock.millis());
            if (!sending.isEmpty()) {
                Runnable r;
                while ((r = sending.poll()) != null) {
                    r.run();
                }
                continue;
            }
            assertThat(next).as("lanes wait for a time; nothing is stuck").isNotEqualTo(Long.MAX_VALUE);
            if (next > clock.millis()) {
                clock.setMillis(next);
            }
        }
    }

    @Test
    void with_every_in_flight_place_taken_the_heads_of_a_bot_waiting_for_the_same_instant_are_decided_by_one_call() {
        Lanes lanes = lanes();
        Dispatcher dispatcher = dispatcher(lanes);
        for (String chat : List.of("A", "B", "C", "D", "E", "F")) {
            add(lanes, chat.toLowerCase(), chat);
        }

        drain(lanes, dispatcher);

        // t0: a asks (granted now); b..f take this instance's pacer slots (+34..+167 ms), aligned to the window
        // (+250 ms): there the five heads are ready at once and ONE call reserves the bot's next five slots
        assertThat(budget.callChats).hasSize(2);
        assertThat(budget.callChats.get(0)).containsExactly("A");
        assertThat(budget.callChats.get(1)).containsExactlyInAnyOrder("B", "C", "D", "E", "F");
        assertThat(transport.sent).hasSize(6);
        assertThat(sink.results).hasSize(6);
        assertSentAtTheirSlots();
    }

    @Test
    void each_message_is_sent_at_or_after_its_slot_and_each_chat_in_order() {
        Lanes lanes = lanes();
        Dispatcher dispatcher = dispatcher(lanes);
        for (int i = 1; i <= 3; i++) { // three messages per chat, four chats: 12 messages of one bot
            for (String chat : List.of("A", "B", "C", "D")) {
                add(lanes, chat.toLowerCase() + i, chat);
            }
        }

        drain(lanes, dispatcher);

        assertThat(transport.sent).hasSize(12);
        for (String chat : List.of("A", "B", "C", "D")) {
            String c = chat.toLowerCase();
            assertThat(transport.sent.stream().filter(s -> s.startsWith(chat + "/")).toList()).as("chat %s in order", chat)
                    .containsExactly(chat + "/text " + c + "1", chat + "/text " + c + "2", chat + "/text " + c + "3");
        }
        assertSentAtTheirSlots();
        int requests = budget.callChats.stream().mapToInt(List::size).sum();
        assertThat(budget.callChats).as("budget calls for 12 messages (%d requests)", requests).hasSizeLessThan(12);
    }

    /**
     * Each message was sent at or after the slot the budget granted it, never before, one send per grant (per chat,
     * in order), and the bot's sends keep the global spacing (30/s).
     */
    private void assertSentAtTheirSlots() {
        Map<String, Integer> seen = new HashMap<>();
        for (int i = 0; i < transport.sent.size(); i++) {
            String chat = transport.sent.get(i).substring(0, transport.sent.get(i).indexOf('/'));
            int n = seen.merge(chat, 1, Integer::sum) - 1;
            List<Long> granted = budget.slotsMs.get(chat);
            assertThat(granted).as("grants of chat %s", chat).hasSizeGreaterThan(n);
            assertThat(transport.sentAt.get(i)).as("send %d of chat %s", n, chat).isGreaterThanOrEqualTo(granted.get(n));
            if (i > 0) {
                assertThat(transport.sentAt.get(i) - transport.sentAt.get(i - 1)).as("global spacing")
                        .isGreaterThanOrEqualTo(33);
            }
        }
        seen.forEach((chat, n) -> assertThat(budget.slotsMs.get(chat)).as("one grant per send of %s", chat).hasSize(n));
    }
}
