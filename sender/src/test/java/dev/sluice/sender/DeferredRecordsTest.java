package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class DeferredRecordsTest {
    private final TopicPartition p0 = new TopicPartition("outbox.live", 0);
    private final TopicPartition p1 = new TopicPartition("outbox.live", 1);

    @Test
    void a_bot_at_its_bound_is_deferred_while_other_bots_of_the_partition_are_buffered() {
        DeferredRecords d = new DeferredRecords(2, 100);
        assertThat(d.admit(p0, 0, "a", 2)).as("a is at its bound").isFalse();
        assertThat(d.admit(p0, 1, "b", 0)).as("b has room").isTrue();
        assertThat(d.admit(p0, 2, "a", 2)).isFalse();
        assertThat(d.deferred("a")).isEqualTo(2);
        assertThat(d.deferred("b")).isZero();
        assertThat(d.toPause()).as("below the cap nothing pauses").isEmpty();
    }

    @Test
    void once_a_record_of_a_bot_is_deferred_its_later_records_of_the_partition_wait_behind_it() {
        DeferredRecords d = new DeferredRecords(2, 100);
        assertThat(d.admit(p0, 5, "a", 2)).isFalse();
        assertThat(d.admit(p0, 6, "a", 0)).as("room again, but offset 5 is still deferred: order").isFalse();
        assertThat(d.admit(p1, 7, "a", 0)).as("another partition has its own order").isTrue();
    }

    @Test
    void a_rewind_reads_the_deferred_records_again_in_order_and_passes_over_what_was_handled() {
        DeferredRecords d = new DeferredRecords(4, 100);
        d.admit(p0, 10, "a", 4);
        d.admit(p0, 11, "b", 0);
        d.admit(p0, 12, "a", 4);
        d.admit(p0, 13, "b", 0);
        assertThat(d.rewinds(bot -> 3)).as("backlog above half the bound: no rewind yet").isEmpty();
        Map<TopicPartition, Long> rewinds = d.rewinds(bot -> 2);
        assertThat(rewinds).containsExactly(Map.entry(p0, 10L));
        assertThat(d.rewinds(bot -> 0)).as("already reading again").isEmpty();
        // the re-read from offset 10
        assertThat(d.handledBefore(p0, 10, "a")).isFalse();
        assertThat(d.admit(p0, 10, "a", 2)).isTrue();
        assertThat(d.handledBefore(p0, 11, "b")).as("b's record was buffered the first time").isTrue();
        assertThat(d.handledBefore(p0, 12, "a")).isFalse();
        assertThat(d.admit(p0, 12, "a", 3)).isTrue();
        assertThat(d.handledBefore(p0, 13, "b")).isTrue();
        assertThat(d.size()).isZero();
        assertThat(d.handledBefore(p0, 14, "a")).as("a new record").isFalse();
    }

    @Test
    void at_the_cap_the_partitions_holding_deferred_records_pause_until_read_again_and_revocation_forgets() {
        DeferredRecords d = new DeferredRecords(1, 2);
        d.admit(p0, 0, "a", 1);
        d.admit(p1, 0, "a", 1);
        assertThat(d.toPause()).containsExactlyInAnyOrder(p0, p1);
        assertThat(d.rewinds(bot -> 0)).containsOnlyKeys(p0, p1);
        assertThat(d.toPause()).as("being read again").isEmpty();
        d.forget(List.of(p0, p1));
        assertThat(d.size()).isZero();
        assertThat(d.deferred("a")).isZero();
        assertThat(d.handledBefore(p0, 0, "a")).isFalse();
    }
}
