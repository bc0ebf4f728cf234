package dev.sluice.sender.budget;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Issue 19, session 9: a held write (the SENT mark) is not carried by a budget call before its hold, so the DONE of the
 * same message replaces it and only the DONE is written; everything else rides at once.
 */
class MarkWritesTest {
    private static final long TTL = 60_000;

    @Test
    void a_sent_replaced_by_its_done_within_the_hold_is_never_written() {
        MarkWrites w = new MarkWrites(10, TTL, Duration.ofHours(1));
        assertThat(w.offerHeld("b", "m1", "SENT|DELIVERED|1|5|42")).isTrue();
        assertThat(w.drain("b", 64)).as("held: the budget call does not carry it").isEmpty();
        assertThat(w.size()).isEqualTo(1);
        assertThat(w.offer("b", "m1", "DONE||")).isTrue();
        assertThat(w.size()).as("coalesced per message").isEqualTo(1);
        assertThat(w.drain("b", 64)).as("only the latest state, once").containsExactly(new MarkWrites.Write("m1", "DONE||"));
        assertThat(w.size()).isZero();
        assertThat(w.bots()).isEmpty();
    }

    @Test
    void a_held_write_rides_once_its_hold_passed_and_a_flush_by_hand_takes_it_at_once() throws Exception {
        MarkWrites now = new MarkWrites(10, TTL, Duration.ZERO);
        now.offerHeld("b", "m1", "SENT|DELIVERED|1|5|42");
        assertThat(now.drain("b", 64)).extracting(MarkWrites.Write::messageId).containsExactly("m1");

        MarkWrites held = new MarkWrites(10, TTL, Duration.ofMillis(30));
        held.offerHeld("b", "m1", "SENT|DELIVERED|1|5|42");
        held.offer("b", "m2", "DONE||");
        assertThat(held.drain("b", 64)).as("the DONE rides, the young SENT waits").extracting(MarkWrites.Write::messageId)
                .containsExactly("m2");
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        List<MarkWrites.Write> later = List.of();
        while (later.isEmpty() && System.nanoTime() < deadline) { // bounded: the hold is 30 ms
            Thread.sleep(5);
            later = held.drain("b", 64);
        }
        assertThat(later).extracting(MarkWrites.Write::messageId).containsExactly("m1");

        MarkWrites byHand = new MarkWrites(10, TTL, Duration.ofHours(1));
        byHand.offerHeld("b", "m1", "SENT|DELIVERED|1|5|42");
        assertThat(byHand.drainAll("b", 64)).extracting(MarkWrites.Write::messageId).containsExactly("m1");
    }

    @Test
    void a_held_write_left_by_a_call_keeps_its_age_for_the_timed_flush() {
        MarkWrites w = new MarkWrites(10, TTL, Duration.ofHours(1));
        w.offerHeld("b", "m1", "SENT|DELIVERED|1|5|42");
        w.offer("b", "m2", "DONE||");
        assertThat(w.drain("b", 64)).hasSize(1);
        assertThat(w.botsWaitingAtLeast(0)).containsExactly("b");
        assertThat(w.botsWaitingAtLeast(Duration.ofHours(1).toNanos())).isEmpty();
        assertThat(w.drainAll("b", 64)).extracting(MarkWrites.Write::messageId).containsExactly("m1");
        assertThat(w.botsWaitingAtLeast(0)).isEmpty();
    }

    @Test
    void a_full_buffer_refuses_a_held_write_too_and_max_bounds_a_drain() {
        MarkWrites w = new MarkWrites(2, TTL, Duration.ZERO);
        assertThat(w.offer("b", "m1", "DONE||")).isTrue();
        assertThat(w.offerHeld("b", "m2", "SENT|DELIVERED|1|5|42")).isTrue();
        assertThat(w.offerHeld("b", "m3", "SENT|DELIVERED|2|5|42")).as("full").isFalse();
        assertThat(w.drain("b", 1)).extracting(MarkWrites.Write::messageId).containsExactly("m1");
        assertThat(w.drain("b", 1)).extracting(MarkWrites.Write::messageId).containsExactly("m2");
        assertThat(w.size()).isZero();
    }

    @Test
    void a_call_carries_its_own_bots_writes_first_then_its_groups_within_the_bound() {
        MarkWrites own = new MarkWrites(10, TTL, Duration.ZERO);
        own.offer("a", "a1", "DONE||");
        own.offer("b", "b1", "DONE||");
        assertThat(own.drainForCall("a", 64)).as("by default a bot is its own group").containsOnlyKeys("a");

        MarkWrites one = new MarkWrites(10, TTL, Duration.ofHours(1));
        one.shareAcrossBots();
        one.offer("a", "a1", "DONE||");
        one.offer("b", "b1", "DONE||");
        one.offerHeld("b", "b2", "SENT|DELIVERED|1|5|42");
        one.offer("c", "c1", "DONE||");
        one.offer("c", "c2", "DONE||");
        var first = one.drainForCall("c", 3);
        assertThat(first.keySet()).as("the caller's own first, then the oldest").containsExactly("c", "a");
        assertThat(first.get("c")).extracting(MarkWrites.Write::messageId).containsExactly("c1", "c2");
        var second = one.drainForCall("z", 64);
        assertThat(second).as("a young held SENT stays").containsOnlyKeys("b");
        assertThat(second.get("b")).extracting(MarkWrites.Write::messageId).containsExactly("b1");
        assertThat(one.size()).isEqualTo(1);
        assertThat(one.groupsWaitingAtLeast(0)).hasSize(1);
        assertThat(one.drainGroup(one.groupsWaitingAtLeast(0).get(0), 64, true).get("b"))
                .extracting(MarkWrites.Write::messageId).containsExactly("b2");
        assertThat(one.size()).isZero();
        assertThat(one.groupsWaitingAtLeast(0)).isEmpty();
    }

    @Test
    void on_a_cluster_only_writes_of_the_calls_slot_ride() {
        String twin = null;
        int slot = io.lettuce.core.cluster.SlotHash.getSlot(BudgetKeys.botState("a"));
        for (int i = 0; twin == null; i++) {
            if (io.lettuce.core.cluster.SlotHash.getSlot(BudgetKeys.botState("t" + i)) == slot) {
                twin = "t" + i;
            }
        }
        String other = io.lettuce.core.cluster.SlotHash.getSlot(BudgetKeys.botState("b")) == slot ? "c" : "b";
        MarkWrites w = new MarkWrites(10, TTL, Duration.ZERO);
        w.offer(twin, "t1", "DONE||"); // queued before the grouping is set: regrouped
        w.shareBySlot();
        w.offer(other, "o1", "DONE||");
        assertThat(w.drainForCall("a", 64)).containsOnlyKeys(twin);
        assertThat(w.groupsWaitingAtLeast(0)).hasSize(1);
        assertThat(w.drainForCall("a", 64)).isEmpty();
        assertThat(w.drainForCall(other, 64)).containsOnlyKeys(other);
    }
}
