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
        assertThat(t.toCommit()).containsEntry(tp, new OffsetAndMetadata(0, "sluice-done:"));
        t.markCommitted(t.toCommit());
        assertThat(t.toCommit()).isEmpty();
        t.done(tp, 0);
        assertThat(t.toCommit()).containsEntry(tp, new OffsetAndMetadata(1, "sluice-done:"));
        t.markCommitted(t.toCommit());
        t.remove(tp);
        t.done(tp, 1);
        assertThat(t.toCommit()).isEmpty();
        assertThat(t.committable(tp)).isEqualTo(-1);
    }

    @Test
    void finished_records_above_the_committed_offset_travel_in_the_metadata_and_are_skipped_by_the_next_owner() {
        for (long o = 100; o < 110; o++) {
            t.received(tp, o);
        }
        for (long o : new long[] {101, 102, 103, 105, 107, 108}) {
            t.done(tp, o);
        }
        OffsetAndMetadata commit = t.toCommit().get(tp);
        assertThat(commit.offset()).isEqualTo(100);
        assertThat(commit.metadata()).isEqualTo("sluice-done:101-103,105,107-108");
        t.markCommitted(Map.of(tp, commit));
        t.done(tp, 109);
        assertThat(t.toCommit().get(tp).metadata()).as("metadata change alone is committed")
                .isEqualTo("sluice-done:101-103,105,107-109");

        OffsetTracker next = new OffsetTracker();
        next.skipAlreadyDone(tp, commit);
        assertThat(next.isAlreadyDone(tp, 100)).isFalse();
        assertThat(next.isAlreadyDone(tp, 101)).isTrue();
        assertThat(next.isAlreadyDone(tp, 104)).isFalse();
        assertThat(next.isAlreadyDone(tp, 108)).isTrue();
        assertThat(next.isAlreadyDone(tp, 109)).isFalse();
        next.skipAlreadyDone(tp, new OffsetAndMetadata(5, "not ours"));
    }

    @Test
    void metadata_is_bounded_and_what_does_not_fit_is_redelivered_not_lost() {
        for (long o = 0; o < 5000; o++) {
            t.received(tp, o);
            if (o % 2 == 1) {
                t.done(tp, o);
            }
        }
        OffsetAndMetadata commit = t.toCommit().get(tp);
        assertThat(commit.offset()).isZero();
        assertThat(commit.metadata().length()).isLessThanOrEqualTo(OffsetTracker.MAX_METADATA_CHARS);
    }
}
