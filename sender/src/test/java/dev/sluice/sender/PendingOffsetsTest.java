package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link PendingOffsets} against a {@code TreeSet<Long>} (what OffsetTracker held before) under random runs. */
class PendingOffsetsTest {

    private static void same(PendingOffsets p, TreeSet<Long> model, long probe, String when) {
        assertThat(p.size()).as(when + ": size").isEqualTo(model.size());
        assertThat(p.isEmpty()).as(when + ": empty").isEqualTo(model.isEmpty());
        assertThat(p.first()).as(when + ": first").isEqualTo(model.isEmpty() ? -1 : model.first());
        Long ceiling = model.ceiling(probe);
        assertThat(p.nextAtOrAfter(probe)).as(when + ": next at or after %d", probe).isEqualTo(ceiling == null ? -1 : ceiling);
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6})
    void answers_as_an_ordered_set_of_the_offsets_would(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        PendingOffsets p = new PendingOffsets();
        TreeSet<Long> model = new TreeSet<>();
        long next = random.nextLong(0, 1L << 40);
        for (int step = 0; step < 200_000; step++) {
            int op = random.nextInt(100);
            if (op < 45) { // the poll thread: the next records of the partition
                p.add(next);
                model.add(next);
                next += random.nextInt(100) == 0 ? random.nextInt(2, 200) : 1; // transaction markers leave gaps
            } else if (op < 88 && !model.isEmpty()) { // results, nearly in order
                long o = random.nextInt(4) == 0 ? model.first() : model.first() + random.nextLong(0, 3_000);
                assertThat(p.remove(o)).as("step %d: remove %d", step, o).isEqualTo(model.remove(o));
            } else if (op < 89) { // a record read again below the lowest pending (a seek back)
                long o = Math.max(0, (model.isEmpty() ? next : model.first()) - random.nextLong(1, 5_000));
                p.add(o);
                model.add(o);
            } else if (op < 90) { // a jump past the bitmap's span while records are still pending
                next += PendingOffsets.MAX_SPAN_OFFSETS + random.nextLong(0, 1_000_000);
            } else if (op < 91) { // a far seek back
                long o = Math.max(0, next - PendingOffsets.MAX_SPAN_OFFSETS * random.nextLong(1, 4));
                p.add(o);
                model.add(o);
            } else {
                long o = random.nextBoolean() ? next - random.nextLong(0, 10_000) : next + random.nextLong(0, 10);
                assertThat(p.remove(o)).as("step %d: remove %d", step, o).isEqualTo(model.remove(o));
            }
            long probe = model.isEmpty() ? next : model.first() + random.nextLong(-100, 5_000);
            same(p, model, probe, "step " + step);
        }
        while (!model.isEmpty()) {
            long o = model.pollFirst();
            assertThat(p.remove(o)).isTrue();
        }
        same(p, model, next, "drained");
    }

    @Test
    void a_dense_run_finishing_out_of_order_keeps_its_lowest_pending() {
        PendingOffsets p = new PendingOffsets();
        for (long o = 1_000; o < 11_000; o++) {
            p.add(o);
        }
        for (long o = 10_999; o > 1_000; o--) {
            p.remove(o);
        }
        assertThat(p.size()).isEqualTo(1);
        assertThat(p.first()).isEqualTo(1_000);
        assertThat(p.nextAtOrAfter(1_001)).isEqualTo(-1);
        p.add(11_000);
        assertThat(p.nextAtOrAfter(1_001)).isEqualTo(11_000);
        assertThat(p.remove(1_000)).isTrue();
        assertThat(p.first()).isEqualTo(11_000);
    }
}
