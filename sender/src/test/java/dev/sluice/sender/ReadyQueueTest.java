package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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

    /**
     * Against a TreeSet by (readyAt, order of adding) under random runs whose readyAt values go from the past to far
     * beyond the wheel (a 429's retry_after) while time moves on: with the main wheel, a small one (most adds beyond
     * it) and none. Every peek and poll must be the set's first.
     */
    @ParameterizedTest
    @CsvSource({"1024,1", "1024,2", "64,3", "64,4", "0,5", "128,6"})
    void every_answer_is_an_ordered_sets_over_a_long_random_run(int wheelSlots, long seed) {
        record Model(long readyAt, long seq, ReadyQueue.Entry<Long> entry) {
        }
        SplittableRandom random = new SplittableRandom(seed);
        ReadyQueue<Long> queue = new ReadyQueue<>(wheelSlots);
        TreeSet<Model> model = new TreeSet<>(Comparator.comparingLong(Model::readyAt).thenComparingLong(Model::seq));
        List<Model> held = new ArrayList<>();
        long now = 1_000_000;
        long seq = 0;
        for (int step = 0; step < 100_000; step++) {
            int op = random.nextInt(100);
            if (op < 45) {
                int kind = random.nextInt(20);
                long at = kind == 0 ? now + random.nextLong(1_000, 60_000) // a retry_after
                        : kind == 1 ? now - random.nextLong(0, 2_000) // rescheduled into the past
                        : kind < 8 ? now // enqueued now
                        : now + random.nextLong(0, 600); // a reservation's slot
                Long id = seq;
                Model m = new Model(at, seq++, queue.add(id, at));
                model.add(m);
                held.add(m);
            } else if (op < 60 && !held.isEmpty()) {
                Model m = held.remove(random.nextInt(held.size()));
                if (model.remove(m)) { // else it was polled
                    queue.remove(m.entry());
                }
            } else if (op < 85) {
                ReadyQueue.Entry<Long> head = queue.peek();
                Model first = model.isEmpty() ? null : model.first();
                assertThat(head == null ? null : head.element).as("step %d: peek", step).isEqualTo(first == null ? null : first.seq());
                if (first != null && first.readyAt() <= now) {
                    assertThat(queue.poll()).as("step %d: poll", step).isEqualTo(first.seq());
                    model.remove(first);
                }
            } else {
                now += random.nextInt(0, 40);
            }
            assertThat(queue.size()).as("step %d: size", step).isEqualTo(model.size());
            if (step % 64 == 0) { // heldEntries walks every bucket
                assertThat(queue.heldEntries()).as("step %d: held", step)
                        .isLessThanOrEqualTo(2 * model.size() + ReadyQueue.COMPACT_MIN_REMOVED + 1);
            }
        }
        while (!model.isEmpty()) {
            assertThat(queue.poll()).isEqualTo(model.pollFirst().seq());
        }
        assertThat(queue.poll()).isNull();
        assertThat(queue.heldEntries()).isZero();
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
