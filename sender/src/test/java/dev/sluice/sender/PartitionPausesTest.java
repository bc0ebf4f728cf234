package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class PartitionPausesTest {
    private final TopicPartition p0 = new TopicPartition("outbox.live", 0);
    private final TopicPartition p1 = new TopicPartition("outbox.live", 1);
    private final TopicPartition p2 = new TopicPartition("outbox.live", 2);
    private final Set<TopicPartition> all = Set.of(p0, p1, p2);
    private final PartitionPauses pauses = new PartitionPauses(100, 50);

    @Test
    void the_global_bound_pauses_everything_at_high_water_and_resumes_at_low_water() {
        PartitionPauses.Change c = pauses.decide(all, Set.of(), 100, Set.of(), Set.of());
        assertThat(c.pause()).isEqualTo(all);
        assertThat(c.fullBegan()).isTrue();
        assertThat(pauses.decide(all, all, 70, Set.of(), Set.of()).resume()).as("above low-water").isEmpty();
        c = pauses.decide(all, all, 50, Set.of(), Set.of());
        assertThat(c.resume()).isEqualTo(all);
        assertThat(c.fullEnded()).isTrue();
    }

    @Test
    void a_partition_held_for_an_unreadable_record_stays_paused_when_the_global_bound_lifts() {
        pauses.decide(all, Set.of(), 100, Set.of(p1), Set.of());
        PartitionPauses.Change c = pauses.decide(all, all, 10, Set.of(p1), Set.of());
        assertThat(c.resume()).containsExactlyInAnyOrder(p0, p2);
        assertThat(c.pause()).isEmpty();
    }

    @Test
    void deferred_offsets_at_their_cap_pause_only_their_partitions_and_count_once() {
        PartitionPauses.Change c = pauses.decide(all, Set.of(), 10, Set.of(), Set.of(p2));
        assertThat(c.pause()).containsExactly(p2);
        assertThat(c.deferredCapBegan()).isTrue();
        c = pauses.decide(all, Set.of(p2), 10, Set.of(), Set.of(p2));
        assertThat(c.pause()).isEmpty();
        assertThat(c.deferredCapBegan()).isFalse();
        assertThat(pauses.decide(all, Set.of(p2), 10, Set.of(), Set.of()).resume()).containsExactly(p2);
    }

    @Test
    void partitions_no_longer_assigned_are_neither_paused_nor_resumed() {
        TopicPartition gone = new TopicPartition("outbox.live", 9);
        PartitionPauses.Change c = pauses.decide(all, Set.of(), 10, Set.of(gone), Set.of(gone));
        assertThat(c.pause()).isEmpty();
        assertThat(c.resume()).isEmpty();
    }
}
