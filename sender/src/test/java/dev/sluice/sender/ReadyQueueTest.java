package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReadyQueueTest {
    private final ReadyQueue<String> q = new ReadyQueue<>();

    @Test
    void elements_come_out_by_ready_time_then_in_the_order_they_were_added() {
        q.add("c@5", 5);
        q.add("a@3", 3);
        q.add("d@5", 5);
        q.add("b@3", 3);
        q.add("e@4", 4);
        List<String> out = new ArrayList<>();
        for (String s; (s = q.poll()) != null; ) {
            out.add(s);
        }
        assertThat(out).containsExactly("a@3", "b@3", "e@4", "c@5", "d@5");
        assertThat(q.isEmpty()).isTrue();
        assertThat(q.peek()).isNull();
    }

    @Test
    void a_removed_element_is_skipped_wherever_it_stood() {
        ReadyQueue.Entry<String> a = q.add("a", 1);
        q.add("b", 1);
        ReadyQueue.Entry<String> c = q.add("c", 2);
        q.add("d", 3);
        q.remove(a);
        q.remove(c);
        assertThat(q.size()).isEqualTo(2);
        assertThat(q.peek().element).isEqualTo("b");
        assertThat(q.poll()).isEqualTo("b");
        assertThat(q.peek().readyAtMs).isEqualTo(3);
        assertThat(q.poll()).isEqualTo("d");
        assertThat(q.poll()).isNull();
    }

    @Test
    void removed_entries_never_outnumber_the_live_ones_past_the_sweep_threshold() {
        // lanes waiting far ahead (a 429's retry_after) taken back one by one: lazy removal alone would keep them all
        List<ReadyQueue.Entry<String>> entries = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            entries.add(q.add("l" + i, 3_600_000L + i % 7));
        }
        for (int i = 0; i < 9_000; i++) {
            q.remove(entries.get(i));
            assertThat(q.heldEntries()).isLessThanOrEqualTo(2 * q.size() + ReadyQueue.COMPACT_MIN_REMOVED + 1);
        }
        assertThat(q.size()).isEqualTo(1_000);
        assertThat(q.peek().element).isEqualTo("l9002"); // readyAt 3,600,000 (9002 % 7 == 0), the earliest added left
        for (int i = 9_000; i < 10_000; i++) {
            q.remove(entries.get(i));
        }
        assertThat(q.heldEntries()).isZero();
        assertThat(q.isEmpty()).isTrue();
    }
}
