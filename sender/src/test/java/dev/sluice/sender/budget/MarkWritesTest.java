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
}
