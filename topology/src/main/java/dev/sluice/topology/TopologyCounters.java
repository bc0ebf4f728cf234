package dev.sluice.topology;

import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Lane;
import dev.sluice.avro.NotificationClass;

/**
 * What the topology decided, for metrics (the ops module records these with Micrometer; the demo report
 * counts them). Called on stream threads, so implementations must be thread-safe and fast. Every method
 * is a no-op by default. Under exactly-once a task that is retried after a crash calls again for the
 * records it processes again, so counts are at-least-once; the exact numbers are on the topics (see
 * {@link SluiceTopology}).
 */
public interface TopologyCounters {
    /**
     * Why a notification was folded into a digest instead of sent on as itself: its class, a pending entry of its own
     * key, a pending entry of another key of its chat (it would overtake that digest), the bot's pressure, the chat's policy.
     */
    enum FoldReason { COLLAPSIBLE, PENDING_KEY, PENDING_CHAT, PRESSURE, POLICY }

    /**
     * What made a digest leave: the {@code digest.flush.interval.ms} punctuator, the {@code digest.max.keys}
     * bound (everything pending leaves at once), or the entry reaching {@code digest.max.folded.ids}.
     */
    enum DigestTrigger {
        INTERVAL, MAX_KEYS, MAX_FOLDED_IDS,
        /** An entry left early: its earliest {@code expires_at} came before the next flush ({@link DigestFolder}). */
        DEADLINE;

        /** The metric tag value ({@code interval}, {@code max_keys}, {@code max_folded_ids}, {@code deadline}). */
        public String tag() {
            return name().toLowerCase();
        }
    }

    /** A notification sent on as itself to the outbox. */
    default void sentOn(Lane lane, NotificationClass eventClass) {
    }

    /** A notification folded into a digest entry. */
    default void folded(Lane lane, NotificationClass eventClass, FoldReason reason) {
    }

    /** A digest written to the outbox, settling {@code foldedCount} notifications, because of {@code trigger}. */
    default void digestEmitted(Lane lane, int foldedCount, DigestTrigger trigger) {
    }

    /** A topology result written to {@code delivery.results} (EXPIRED, SKIPPED_INACTIVE, or FAILED for a dead letter). */
    default void result(Lane lane, NotificationClass eventClass, DeliveryStatus status) {
    }

    /** A record that could not be read or was invalid went to the dead-letter topic. */
    default void deadLettered(Lane lane) {
    }

    /** A notification whose id this lane's task saw within {@code dedupe.window.ms}: dropped, no output. */
    default void duplicate(Lane lane) {
    }

    /** A notification put into the schedule store ({@code not_before} in the future). */
    default void scheduled(Lane lane) {
    }

    /** A scheduled notification released by the punctuator. */
    default void released(Lane lane) {
    }

    /** A stream thread failed; {@code replaced}: it was replaced, else the client shuts down ({@link StreamThreadReplacements}). */
    default void streamThreadFailed(boolean replaced) {
    }

    /** Counts nothing. */
    TopologyCounters NONE = new TopologyCounters() {
    };
}
