package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class OffsetTrackerTest {
    private final TopicPartition tp = new TopicPartition("outbox.live", 3);
    private final OffsetTracker t = new OffsetTracker();

    @Test
    void commits_only_up_to_the_lowest_offset_without_a_result() {
        for (long o = 10; o < 15; o++) {
            t.received(tp, o);
        }
        assertThat(t.committable(tp)).isEqualTo(10);
        t.done(tp, 11);
        t.done(tp, 12);
        assertThat(t.committable(tp)).as("10 still has no result").isEqualTo(10);
        t.done(tp, 10);
        assertThat(t.committable(tp)).isEqualTo(13);
        t.done(tp, 13);
        t.done(tp, 14);
        assertThat(t.committable(tp)).as("all done: last + 1").isEqualTo(15);
    }

    @Test
    void only_moved_offsets_are_offered_for_commit() {
        t.received(tp, 0);
        t.received(tp, 1);
        assertThat(t.toCommit()).containsEntry(tp, new OffsetAndMetadata(0));
        t.markCommitted(Map.of(tp, new OffsetAndMetadata(0)));
        assertThat(t.toCommit()).isEmpty();
        t.done(tp, 0);
        assertThat(t.toCommit()).containsEntry(tp, new OffsetAndMetadata(1));
        t.remove(tp);
        t.done(tp, 1);
        assertThat(t.toCommit()).isEmpty();
        assertThat(t.committable(tp)).isEqualTo(-1);
    }
}
