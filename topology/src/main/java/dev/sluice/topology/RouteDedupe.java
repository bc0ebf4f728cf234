package dev.sluice.topology;

import dev.sluice.avro.Notification;
import org.apache.kafka.streams.processor.api.ProcessorContext;

/**
 * Which notifications a lane's route drops as repeats (step 1 of {@link RouteProcessor}): a notification whose id was
 * seen for the <b>same chat</b> (its normalised {@code chat_id}, before any migration re-addressing) by this lane's task
 * within {@code dedupe.window.ms} ({@link SeenIds}). The same id for another chat is never a repeat here, whatever
 * partition the two chats hash to: the id is an idempotency key per bot, and a reuse for another chat is the sender's to
 * report ({@code Outcomes}: a FAILED result), not the topology's to drop without a result.
 *
 * <p>Key: {@code <chat> U+001E <id>[ U+001F <sluice.replayed.from>[ U+001F <sluice.replayed.at>]]}. Chat ids and ids
 * have no control characters ({@link NotificationValidator}), so in a key of this format the first of U+001E and U+001F
 * is the U+001E after the chat. A replay run is a new attempt: two runs replaying one result differ by their
 * {@code sluice.replayed.at} (the second was dropped without a result before it was in the key); one run's record written
 * twice is one.
 *
 * <p>Upgrade: the previous version remembered {@link #legacyKey} (no chat) in the same stores. While an id of that format
 * loaded at init can still be within the window ({@link SeenIds#legacyUntilMs}), a notification is also a repeat when its
 * legacy key was seen: a retry of a notification the previous version routed is still dropped. Such an id names no chat,
 * so until that window has passed a legacy entry also drops the same id for another chat of this task, as the previous
 * version did. Only the new format is written.
 *
 * <p>One instance per route processor, used by its task's stream thread only.
 */
final class RouteDedupe {
    /** Between the chat and the id in a key: not otherwise used in it (the replay suffix uses U+001F). */
    static final char CHAT_SEPARATOR = '\u001E';
    private static final char REPLAY_SEPARATOR = '\u001F';
    /** The time of the {@code sluice replay} run that wrote a replay (epoch ms), as the sender reads it. */
    static final String REPLAYED_AT_ATTRIBUTE = "sluice.replayed.at";

    private final SeenIds seen;

    RouteDedupe(SeenIds seen) {
        this.seen = seen;
    }

    /** The lane's stores of this task ({@link SeenIds#open}), the previous version's keys recognised. */
    static RouteDedupe open(ProcessorContext<?, ?> context, LaneSpec spec, long windowMs) {
        return new RouteDedupe(SeenIds.open(context, spec, windowMs, RouteDedupe::isLegacy));
    }

    /**
     * Whether {@code n} repeats a notification seen within the window (drop it); if not, it is remembered now.
     */
    boolean repeat(Notification n, long nowMs) {
        String key = key(n);
        if (seen.seen(key, nowMs) || (nowMs < seen.legacyUntilMs() && seen.seen(legacyKey(n), nowMs))) {
            return true;
        }
        seen.remember(key, nowMs);
        return false;
    }

    /** The chat, {@link #CHAT_SEPARATOR}, then {@link #legacyKey}, then a replay's run time. */
    static String key(Notification n) {
        String key = n.getChatId() + CHAT_SEPARATOR + legacyKey(n);
        String at = n.getAttributes().get(RouteProcessor.REPLAYED_FROM_ATTRIBUTE) == null ? null
                : n.getAttributes().get(REPLAYED_AT_ATTRIBUTE);
        return at == null ? key : key + REPLAY_SEPARATOR + at;
    }

    /**
     * The previous version's key: the id, plus the {@value RouteProcessor#REPLAYED_FROM_ATTRIBUTE} attribute that
     * {@code sluice replay} adds (a replay of a notification that ended without delivery is a new attempt, not a
     * duplicate of the original; the same replay written twice is one).
     */
    static String legacyKey(Notification n) {
        String replayed = n.getAttributes().get(RouteProcessor.REPLAYED_FROM_ATTRIBUTE);
        return replayed == null ? n.getId() : n.getId() + REPLAY_SEPARATOR + replayed;
    }

    /** Whether a stored key has the previous format: no {@link #CHAT_SEPARATOR}, or a U+001F before the first one. */
    static boolean isLegacy(String key) {
        int chatEnd = key.indexOf(CHAT_SEPARATOR);
        return chatEnd < 0 || key.lastIndexOf(REPLAY_SEPARATOR, chatEnd) >= 0;
    }
}
