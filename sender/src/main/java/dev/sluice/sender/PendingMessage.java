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
    private boolean inFlightMarked;
    private String lastBotId;
    private boolean keptTurn;
    private long reservedSendAtMs = -1;
    /** The arrival guard: the grant this message's next call uses (-1: none) and that grant's slot, epoch ms. */
    private long guardGrantSeq = -1;
    private long guardSlotAtMs;
    private boolean aheadOfUrgent;
    private volatile boolean waitsForTurnOnly;
    /** Set once the provider accepted the message (or may have): from then on only its result is written. */
    private dev.sluice.avro.DeliveryStatus acceptedAs;
    private Long acceptedProviderMessageId;

    public PendingMessage(TopicPartition partition, long offset, OutboundMessage message) {
        this.partition = Objects.requireNonNull(partition);
        this.offset = offset;
        this.message = Objects.requireNonNull(message);
        // issue 16: the chat id keys the lane, the budget, the chat marks and the result; normalised once here
        String chat = dev.sluice.chat.ChatIds.normalise(message.getChatId());
        if (chat != null && !chat.equals(message.getChatId())) {
            message.setChatId(chat);
        }
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

    /** The bot whose budget calls may decide this message together with others: its bot, null for a pool message. */
    String batchBot() {
        return message.getBotPool().isEmpty() ? message.getBotId() : null;
    }

    /**
     * True while this message is the head of a lane that holds an urgent message behind it (priority
     * inheritance): it asks the budget as the urgent one would, so the urgent one is not held up by it.
     */
    public boolean aheadOfUrgent() {
        return aheadOfUrgent;
    }

    /** Set by the scheduler's owner each time this message is handed out as its lane's head. */
    public void aheadOfUrgent(boolean value) {
        this.aheadOfUrgent = value;
    }

    /**
     * True while the lane waits only for this message's turn in the pacing of its bot's attempts (no limit
     * refused it): an urgent message joining the lane may bring the wait forward. Read by the scheduler's
     * owner while the lane waits, written by the task that holds the head.
     */
    public boolean waitsForTurnOnly() {
        return waitsForTurnOnly;
    }

    public void waitsForTurnOnly(boolean value) {
        this.waitsForTurnOnly = value;
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

    /** Whether the grant of the current attempt wrote the in-flight mark (then SENT may ride on a later call). */
    boolean inFlightMarked() {
        return inFlightMarked;
    }

    void inFlightMarked(boolean marked) {
        inFlightMarked = marked;
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

    /** Whether this message holds a reserved budget slot (read by the scheduler's owner while its lane waits). */
    boolean holdsReservation() {
        return reservedSendAtMs >= 0;
    }

    void reserved(long sendAtMs) {
        reservedSendAtMs = sendAtMs;
    }

    void clearReservation() {
        reservedSendAtMs = -1;
    }

    /** The call about to be made uses grant {@code seq} of the arrival guard, whose slot was no earlier than {@code slotAtMs}. */
    void guardedGrant(long seq, long slotAtMs) {
        guardGrantSeq = seq;
        guardSlotAtMs = slotAtMs;
    }

    long guardGrantSeq() {
        return guardGrantSeq;
    }

    long guardSlotAtMs() {
        return guardSlotAtMs;
    }

    /**
     * The provider accepted this message ({@code DELIVERED}) or may have ({@code UNCERTAIN}). Recorded before the
     * result is built or written: a step that fails after this point writes the result again, never calls the
     * provider again.
     */
    void accepted(dev.sluice.avro.DeliveryStatus status, Long providerMessageId) {
        this.acceptedAs = java.util.Objects.requireNonNull(status);
        this.acceptedProviderMessageId = providerMessageId;
    }

    /** The status the provider's acceptance gave this message, or null while it was not accepted. */
    dev.sluice.avro.DeliveryStatus acceptedAs() {
        return acceptedAs;
    }

    Long acceptedProviderMessageId() {
        return acceptedProviderMessageId;
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
