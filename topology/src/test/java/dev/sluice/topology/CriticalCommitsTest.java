package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.junit.jupiter.api.Test;

/** Issue 21: {@link CriticalCommits} asks for a commit after a CRITICAL record, at most once per spacing per stream thread. */
class CriticalCommitsTest {
    private static final long T = 1_900_000_000_000L;

    @Test
    void asksAtOnceThenHoldsBackWithinTheSpacingAndTheNextRecordAsksForWhatWasHeldBack() {
        MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
        CriticalCommits commits = new CriticalCommits(20);
        commits.critical(context, T);
        assertThat(context.committed()).as("first CRITICAL: at once").isTrue();
        context.resetCommit();

        commits.critical(context, T + 5);
        assertThat(context.committed()).as("5 ms later: held back").isFalse();
        commits.nextRecord(context, T + 15);
        assertThat(context.committed()).as("still within 20 ms").isFalse();
        commits.nextRecord(context, T + 20);
        assertThat(context.committed()).as("the held-back one, 20 ms after the last request").isTrue();
        context.resetCommit();

        commits.nextRecord(context, T + 60);
        assertThat(context.committed()).as("nothing pending: no commit").isFalse();
        assertThat(commits.requests()).isEqualTo(2);
    }

    @Test
    void theSpacingIsPerStreamThreadAcrossProcessorsAndAClockThatWentBackDoesNotHoldRequestsBack() {
        MockProcessorContext<Object, Object> live = new MockProcessorContext<>();
        MockProcessorContext<Object, Object> backfill = new MockProcessorContext<>();
        CriticalCommits a = new CriticalCommits(20);
        CriticalCommits b = new CriticalCommits(20);
        a.critical(live, T + 1_000);
        assertThat(live.committed()).isTrue();
        b.critical(backfill, T + 1_010);
        assertThat(backfill.committed()).as("another processor on the same thread asked 10 ms ago").isFalse();
        b.nextRecord(backfill, T + 1_030);
        assertThat(backfill.committed()).isTrue();
        backfill.resetCommit();
        b.critical(backfill, T);
        assertThat(backfill.committed()).as("the wall clock went back").isTrue();
    }

    @Test
    void zeroTurnsItOff() {
        MockProcessorContext<Object, Object> context = new MockProcessorContext<>();
        CriticalCommits off = new CriticalCommits(0);
        assertThat(off.enabled()).isFalse();
        off.critical(context, T);
        off.nextRecord(context, T + 1_000);
        assertThat(context.committed()).isFalse();
        assertThatThrownBy(() -> new CriticalCommits(-1)).isInstanceOf(IllegalArgumentException.class);
    }
}
