package dev.sluice.sender;

import dev.sluice.avro.OutboundMessage;
import java.util.Objects;
import org.apache.kafka.common.TopicPartition;

/**
 * One consumed outbound message on its way to a result, with the state of its attempts. Mutated only by
 * the one task that currently holds its lane's head (hand-over through the scheduler lock).
 */
public final class PendingMessage {
    private final TopicPartition partition;
    private final long offset;
    private final OutboundMessage message;
    private int attempts;
    private int transientFailures;
    private long lastSentAtMs = -1;
    private boolean holdsAttemptSlot;
    private int reschedules;
    private boolean sentMarkChecked;
    private String lastBotId;
    private boolean keptTurn;
    private long reservedSendAtMs = -1;

    public PendingMessage(TopicPartition partition, long offset, OutboundMessage message) {
        this.partition = Objects.requireNonNull(partition);
        this.offset = offset;
        this.message = Objects.requireNonNull(message);
    }

    public TopicPartition partition() {
        return partition;
    }

    public long offset() {
        return offset;
    }

    public OutboundMessage message() {
        return message;
    }

    public LaneKey laneKey() {
        return new LaneKey(partition, message.getChatId());
    }

    /** Provider calls made so far. */
    public int attempts() {
        return attempts;
    }

    /** 5xx / I/O failures so far; 429s do not count (they are a schedule, not an error). */
    public int transientFailures() {
        return transientFailures;
    }

    /** Epoch ms of the last provider call, or -1. */
    public long lastSentAtMs() {
        return lastSentAtMs;
    }

    /** Whether the lane waited for a pacer slot and may now ask the budget without reserving again. */
    boolean holdsAttemptSlot() {
        return holdsAttemptSlot;
    }

    void holdAttemptSlot() {
        holdsAttemptSlot = true;
    }

    void releaseAttemptSlot() {
        holdsAttemptSlot = false;
    }

    void recordCall(long nowMs, String botId) {
        attempts++;
        lastSentAtMs = nowMs;
        lastBotId = botId;
    }

    /** The bot of the last provider call (a pool member, or the message's bot), null before any call. */
    String lastBotId() {
        return lastBotId;
    }

    /** Times the message was sent back to wait by a provider answer or a penalty gate (429, 5xx, gate). */
    int reschedules() {
        return reschedules;
    }

    void recordReschedule() {
        reschedules++;
    }

    /** Whether the lane already asked again at the budget's wait instead of taking a new pacer slot. */
    boolean keptTurn() {
        return keptTurn;
    }

    void keptTurn(boolean kept) {
        keptTurn = kept;
    }

    boolean sentMarkChecked() {
        return sentMarkChecked;
    }

    void sentMarkChecked(boolean checked) {
        sentMarkChecked = checked;
    }

    /** Epoch ms from which the budget slot this message reserved may be used, or -1 when it holds none. */
    long reservedSendAtMs() {
        return reservedSendAtMs;
    }

    void reserved(long sendAtMs) {
        reservedSendAtMs = sendAtMs;
    }

    void clearReservation() {
        reservedSendAtMs = -1;
    }

    void recordTransientFailure() {
        transientFailures++;
    }

    @Override
    public String toString() {
        return "PendingMessage{" + partition + "@" + offset + ", id=" + message.getId() + ", chat=" + message.getChatId()
                + ", attempts=" + attempts + "}";
    }
}
