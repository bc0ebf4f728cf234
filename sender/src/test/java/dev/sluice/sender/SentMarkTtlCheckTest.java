package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.sender.SentMarkTtlCheck.TopicWindow;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The rule of {@link SentMarkTtlCheck}: the mark TTL must cover retention.ms + segment.ms of every outbox topic. */
class SentMarkTtlCheckTest {
    private static final long DAY_MS = Duration.ofDays(1).toMillis();
    private static final TopicWindow KAFKA_DEFAULTS = new TopicWindow("outbox.live", 7 * DAY_MS, 7 * DAY_MS, true);

    @Test
    void theDefaultTtlCoversKafkasDefaultRetentionPlusASegment() {
        assertThat(SentMarkTtlCheck.problem(SenderKeys.SENT_MARK_TTL_MS.defaultValue(), List.of(KAFKA_DEFAULTS))).isEmpty();
        assertThat(KAFKA_DEFAULTS.redelivery()).contains(Duration.ofDays(14));
    }

    @Test
    void aTtlEqualToTheRetentionAloneIsShort() {
        assertThat(SentMarkTtlCheck.problem(Duration.ofDays(7), List.of(KAFKA_DEFAULTS))).hasValueSatisfying(w -> assertThat(w)
                .contains("sender.sent.mark.ttl.ms=604800000").contains("outbox.live")
                .contains("retention.ms 604800000 + segment.ms 604800000 = 1209600000 ms"));
    }

    @Test
    void onlyTheTopicsTheTtlDoesNotCoverAreNamed() {
        TopicWindow backfill = new TopicWindow("outbox.backfill", DAY_MS, DAY_MS / 24, true);
        assertThat(SentMarkTtlCheck.problem(Duration.ofDays(3), List.of(KAFKA_DEFAULTS, backfill)))
                .hasValueSatisfying(w -> assertThat(w).contains("outbox.live").doesNotContain("outbox.backfill"));
        assertThat(SentMarkTtlCheck.problem(Duration.ofDays(3), List.of(backfill))).isEmpty();
    }

    @Test
    void unboundedRetentionOrCompactionIsNeverCovered() {
        assertThat(SentMarkTtlCheck.problem(Duration.ofDays(365), List.of(new TopicWindow("outbox.live", -1, 7 * DAY_MS, true))))
                .hasValueSatisfying(w -> assertThat(w).contains("without a time bound (retention.ms=-1)"));
        assertThat(SentMarkTtlCheck.problem(Duration.ofDays(365), List.of(new TopicWindow("outbox.live", DAY_MS, DAY_MS, false))))
                .hasValueSatisfying(w -> assertThat(w).contains("cleanup.policy without delete"));
    }
}
