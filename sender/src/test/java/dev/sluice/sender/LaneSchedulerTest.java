package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class LaneSchedulerTest {
    private final TopicPartition p0 = new TopicPartition("outbox.live", 0);
    private final TopicPartition p1 = new TopicPartition("outbox.live", 1);
    private final LaneScheduler<String> s = new LaneScheduler<>();

    private LaneKey chat(String id) {
        return new LaneKey(p0, id);
    }

    @Test
    void a_chat_is_served_in_fifo_order_and_only_its_head_is_eligible() {
        s.add(chat("A"), "A1", 0);
        s.add(chat("A"), "A2", 0);
        s.add(chat("B"), "B1", 0);
        LaneScheduler.Head<String> a = s.pollReady(0);
        assertThat(a.message()).isEqualTo("A1");
        assertThat(s.pollReady(0).message()).as("A2 is not eligible while A1 is out").isEqualTo("B1");
        assertThat(s.pollReady(0)).isNull();
        s.complete(a, 5);
        assertThat(s.nextReadyAtMs()).isEqualTo(5);
        assertThat(s.pollReady(4)).isNull();
        assertThat(s.pollReady(5).message()).isEqualTo("A2");
    }

    @Test
    void a_penalised_chat_waits_alone_without_blocking_other_chats() {
        s.add(chat("X"), "X1", 0);
        s.add(chat("X"), "X2", 0);
        for (int i = 0; i < 5; i++) {
            s.add(chat("c" + i), "c" + i, 0);
        }
        LaneScheduler.Head<String> x = s.pollReady(0);
        assertThat(x.message()).isEqualTo("X1");
        s.reschedule(x, 10_000); // e.g. 429 retry_after 10 s

        for (int i = 0; i < 5; i++) {
            LaneScheduler.Head<String> h = s.pollReady(1);
            assertThat(h.message()).isEqualTo("c" + i);
            s.complete(h, 1);
        }
        assertThat(s.nextReadyAtMs()).isEqualTo(10_000);
        assertThat(s.pollReady(9_999)).isNull();
        LaneScheduler.Head<String> again = s.pollReady(10_000);
        assertThat(again.message()).as("the same head, order kept").isEqualTo("X1");
        s.complete(again, 10_001);
        assertThat(s.pollReady(10_001).message()).isEqualTo("X2");
    }

    @Test
    void lanes_that_are_ready_at_the_same_time_are_served_in_arrival_order() {
        s.add(chat("B"), "B1", 7);
        s.add(chat("A"), "A1", 7);
        s.add(chat("C"), "C1", 3);
        assertThat(s.pollReady(7).message()).isEqualTo("C1");
        assertThat(s.pollReady(7).message()).isEqualTo("B1");
        assertThat(s.pollReady(7).message()).isEqualTo("A1");
    }

    @Test
    void dropping_a_partition_removes_its_lanes_and_ignores_heads_still_out() {
        s.add(new LaneKey(p0, "A"), "A1", 0);
        s.add(new LaneKey(p0, "A"), "A2", 0);
        s.add(new LaneKey(p0, "B"), "B1", 0);
        s.add(new LaneKey(p1, "C"), "C1", 0);
        LaneScheduler.Head<String> out = s.pollReady(0);
        assertThat(out.message()).isEqualTo("A1");
        assertThat(s.buffered()).isEqualTo(4);

        assertThat(s.dropPartition(p0)).containsExactlyInAnyOrder("A1", "A2", "B1");
        assertThat(s.buffered()).isEqualTo(1);
        s.complete(out, 1); // in-flight work finishing after revocation changes nothing
        assertThat(s.buffered()).isEqualTo(1);
        assertThat(s.pollReady(1).message()).isEqualTo("C1");
        assertThat(s.pollReady(1)).isNull();

        // the partition comes back: a fresh lane, not confused with the dropped one
        s.add(new LaneKey(p0, "A"), "A1", 2);
        assertThat(s.pollReady(2).message()).isEqualTo("A1");
    }

    @Test
    void nothing_waiting_means_no_wake_up_time() {
        assertThat(s.nextReadyAtMs()).isEqualTo(Long.MAX_VALUE);
        s.add(chat("A"), "A1", 0);
        LaneScheduler.Head<String> h = s.pollReady(0);
        assertThat(s.nextReadyAtMs()).as("a busy lane is not waiting").isEqualTo(Long.MAX_VALUE);
        s.complete(h, 0);
        assertThat(s.laneCount()).isZero();
        assertThat(s.buffered()).isZero();
    }

    // Messages starting with '!' are urgent (a live CRITICAL in the sender).
    // Messages ending with '~' only wait for a pacing turn, not for a limit.
    private final LaneScheduler<String> prio = new LaneScheduler<>(m -> m.startsWith("!"), m -> m.endsWith("~"));

    @Test
    void a_ready_urgent_lane_is_served_before_lanes_that_were_ready_longer() {
        for (int i = 0; i < 5; i++) {
            prio.add(chat("r" + i), "r" + i, 0);
        }
        prio.add(chat("C"), "!C1", 10);
        assertThat(prio.pollReady(5).message()).as("not ready yet: readyAt still counts").isEqualTo("r0");
        assertThat(prio.pollReady(10).message()).isEqualTo("!C1");
        assertThat(prio.pollReady(10).message()).isEqualTo("r1");
    }

    @Test
    void an_urgent_message_behind_routine_ones_lifts_its_lane_and_keeps_chat_order() {
        prio.add(chat("r"), "r1", 0);
        prio.add(chat("A"), "A1", 0);
        prio.add(chat("A"), "A2", 0);
        LaneScheduler.Head<String> r = prio.pollReady(0);
        assertThat(r.message()).isEqualTo("r1");
        prio.reschedule(r, 100); // refused by the budget
        LaneScheduler.Head<String> a = prio.pollReady(0);
        prio.reschedule(a, 100); // refused too, after r: behind it in the ordinary set
        prio.add(chat("A"), "!A3", 50); // a reminder arrives behind A's routine messages

        assertThat(prio.pollReady(100).message()).as("A is lifted; its head goes first").isEqualTo("A1");
        LaneScheduler.Head<String> then = prio.pollReady(100);
        assertThat(then.message()).isEqualTo("r1");
        prio.complete(then, 100);
    }

    @Test
    void a_lane_drops_back_to_ordinary_once_its_urgent_message_has_left() {
        prio.add(chat("A"), "!A1", 0);
        prio.add(chat("A"), "A2", 0);
        prio.add(chat("B"), "B1", 0);
        LaneScheduler.Head<String> a = prio.pollReady(0);
        assertThat(a.message()).isEqualTo("!A1");
        assertThat(prio.isUrgent(a)).isTrue();
        prio.complete(a, 1);
        LaneScheduler.Head<String> b = prio.pollReady(1);
        assertThat(b.message()).as("A (readyAt 1) is ordinary again; B was ready at 0").isEqualTo("B1");
        assertThat(prio.isUrgent(b)).isFalse();
        assertThat(prio.pollReady(1).message()).isEqualTo("A2");
        assertThat(prio.nextReadyAtMs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void an_urgent_lane_waiting_for_a_retry_does_not_jump_its_wait_and_wakes_the_scheduler_in_time() {
        prio.add(chat("A"), "!A1", 0);
        prio.add(chat("B"), "B1", 0);
        LaneScheduler.Head<String> a = prio.pollReady(0);
        prio.reschedule(a, 1_000); // 429 retry_after 1 s: urgency never overrides a wait
        assertThat(prio.nextReadyAtMs()).isEqualTo(0);
        assertThat(prio.pollReady(0).message()).isEqualTo("B1");
        assertThat(prio.nextReadyAtMs()).isEqualTo(1_000);
        assertThat(prio.pollReady(999)).isNull();
        assertThat(prio.pollReady(1_000).message()).isEqualTo("!A1");
    }

    @Test
    void dropping_a_partition_removes_urgent_lanes_too() {
        prio.add(new LaneKey(p0, "A"), "!A1", 0);
        prio.add(new LaneKey(p1, "B"), "B1", 0);
        assertThat(prio.dropPartition(p0)).containsExactly("!A1");
        assertThat(prio.pollReady(0).message()).isEqualTo("B1");
        assertThat(prio.pollReady(0)).isNull();
        assertThat(prio.nextReadyAtMs()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void an_urgent_message_advances_a_lane_waiting_only_for_its_pacing_turn_but_not_one_waiting_for_a_limit() {
        prio.add(chat("paced"), "P1~", 0);
        prio.add(chat("limited"), "L1", 0);
        LaneScheduler.Head<String> paced = prio.pollReady(0);
        LaneScheduler.Head<String> limited = prio.pollReady(0);
        prio.reschedule(paced, 5_000); // its turn among many routine lanes
        prio.reschedule(limited, 5_000); // e.g. a chat's 429
        prio.add(chat("paced"), "!P2", 10);
        prio.add(chat("limited"), "!L2", 10);
        assertThat(prio.pollReady(10).message()).isEqualTo("P1~");
        assertThat(prio.pollReady(10)).as("a limit's wait is kept").isNull();
        assertThat(prio.nextReadyAtMs()).isEqualTo(5_000);
    }

    /** Messages "<group>:<name>", "!" in the name: urgent, "*": holds a reserved slot (served first). */
    private static LaneScheduler<String> grouped() {
        return new LaneScheduler<>(m -> m.contains("!"), m -> false, m -> m.substring(0, m.indexOf(':')),
                m -> m.contains("*"));
    }

    @Test
    void the_ready_lanes_of_one_group_are_handed_out_by_group_earliest_first() {
        LaneScheduler<String> g = grouped();
        g.add(chat("A"), "b1:a", 0);
        g.add(chat("B"), "b2:b", 1);
        g.add(chat("C"), "b1:c", 2);
        g.add(chat("D"), "b1:d", 50);
        assertThat(g.pollReadyOf("b1", 10).message()).isEqualTo("b1:a");
        assertThat(g.pollReadyOf("b1", 10).message()).isEqualTo("b1:c");
        assertThat(g.pollReadyOf("b1", 10)).as("d is not ready before 50").isNull();
        assertThat(g.pollReadyOf("b3", 10)).isNull();
        assertThat(g.pollReady(10).message()).as("the others stay in readyAt order").isEqualTo("b2:b");
        assertThat(g.pollReady(10)).isNull();
        assertThat(g.pollReady(50).message()).isEqualTo("b1:d");
        assertThat(g.pollReadyOf("b1", 100)).as("handed out by pollReady: gone from its group").isNull();
        assertThat(new LaneScheduler<String>().pollReadyOf("b1", 0)).as("no groups indexed").isNull();
    }

    @Test
    void a_head_holding_a_reservation_is_served_first_and_never_by_group() {
        LaneScheduler<String> g = grouped();
        g.add(chat("A"), "b1:a", 0);
        g.add(chat("R"), "b1:r*", 5);
        assertThat(g.pollReady(10).message()).as("the due reservation before an earlier routine lane").isEqualTo("b1:r*");
        g.add(chat("S"), "b1:s*", 20);
        assertThat(g.pollReadyOf("b1", 30).message()).as("a reserved head is not taken into a batch").isEqualTo("b1:a");
        assertThat(g.pollReadyOf("b1", 30)).isNull();
        // an urgent message joins the lane of a waiting reserved head: it stays consistent and is served at its time
        g.add(chat("S"), "b1:u!", 21);
        assertThat(g.nextReadyAtMs()).isEqualTo(20);
        LaneScheduler.Head<String> s = g.pollReady(20);
        assertThat(s.message()).isEqualTo("b1:s*");
        g.complete(s, 25);
        assertThat(g.pollReadyOf("b1", 25).message()).as("the urgent head is batchable").isEqualTo("b1:u!");
        assertThat(g.buffered()).as("a, r and u are out; s completed").isEqualTo(3);
    }
}
