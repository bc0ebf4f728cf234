package dev.sluice.sender.idempotency;

/**
 * Idempotency keys of outbound messages (DESIGN.md, Sender: "a message already marked sent is not sent
 * again"). A mark is written right after the provider accepted a message (DELIVERED) or may have
 * (UNCERTAIN), before its result is written, and raised to {@link State#RESULT_WRITTEN} once Kafka
 * acknowledged the result. A sender that receives a message again after a crash or a rebalance checks the
 * mark before sending:
 * <ul>
 * <li>{@link State#NONE}: send it;</li>
 * <li>{@link State#IN_FLIGHT}: a grant for it was written by the budget (issue 19) and no outcome since: its previous
 * owner may have sent it or not; if its result is on the results topic, do not send and write nothing, else send;</li>
 * <li>{@link State#SENT}: do not send; write the result the previous owner could not write;</li>
 * <li>{@link State#RESULT_WRITTEN}: do not send and write nothing: the message already has its result.</li>
 * </ul>
 * A mark whose {@code resultKey} (the chat its result is written under; absent in marks of older versions) is not the
 * message's chat is not a redelivery: the id was used for another chat of the bot (see {@code Outcomes#replay}).
 * Keys are per logical bot and message id ({@code sluice:{bot}:sent:<id>}) and expire after a TTL chosen
 * longer than any redelivery (the outbox retention). Implementations are thread-safe.
 */
public interface SentMarks extends AutoCloseable {

    /** What is known about a message id. */
    enum State { NONE, IN_FLIGHT, SENT, RESULT_WRITTEN }

    /**
     * A mark read back.
     *
     * @param state             see {@link State}
     * @param status            the status the previous owner decided (DELIVERED, UNCERTAIN), null for NONE
     * @param providerMessageId the provider's message id when delivered, else null
     */
    record Mark(State state, String status, Long providerMessageId, long atMs, String resultKey) {
        public static final Mark NONE = new Mark(State.NONE, null, null, 0, null);

        public Mark(State state, String status, Long providerMessageId) {
            this(state, status, providerMessageId, 0, null);
        }
    }

    /**
     * @throws SentMarksUnavailableException when the store cannot be reached
     */
    Mark get(String botId, String messageId);

    /**
     * The provider accepted (or may have accepted) the message: it must not be sent again.
     *
     * @throws SentMarksUnavailableException when the store cannot be reached
     */
    void markSent(String botId, String messageId, String status, Long providerMessageId);

    /**
     * As {@link #markSent(String, String, String, Long)}, also recording when ({@code atMs}) and under which key
     * ({@code resultKey}, the chat id) the result will be written, so a new owner can look for it.
     */
    default void markSent(String botId, String messageId, String status, Long providerMessageId, long atMs,
                          String resultKey) {
        markSent(botId, messageId, status, providerMessageId);
    }

    /**
     * As {@link #markSent(String, String, String, Long, long, String)}, for a message whose grant wrote its in-flight
     * mark: the write may wait for a later call to the same Redis ({@link #defersWrites()}). A crash before it is
     * written leaves the in-flight mark, so the next owner looks for the result before sending.
     */
    default void markSentLater(String botId, String messageId, String status, Long providerMessageId, long atMs,
                               String resultKey) {
        markSent(botId, messageId, status, providerMessageId, atMs, resultKey);
    }

    /** Whether writes wait for the budget's calls (issue 19; then the budget writes in-flight marks with its grants). */
    default boolean defersWrites() {
        return false;
    }

    /**
     * The message's result is written under {@code resultKey} (its normalised chat id, kept in the mark so that the same
     * id for another chat is told from a redelivery; null: none kept); best effort (asynchronous for Redis), never throws.
     */
    void markResultWritten(String botId, String messageId, String resultKey);

    /** As {@link #markResultWritten(String, String, String)} without a result key. */
    default void markResultWritten(String botId, String messageId) {
        markResultWritten(botId, messageId, null);
    }

    /**
     * The Redis URL these marks live in ({@code sluice:{bot}:sent:<id>}), so a budget in the same Redis can read
     * them in its own decision; empty when they are not in Redis.
     */
    default java.util.Optional<String> redisUrl() {
        return java.util.Optional.empty();
    }

    /** Redis round trips that read marks so far; 0 when not in Redis. */
    default long redisReads() {
        return 0;
    }

    /** Redis round trips that wrote marks so far (SENT after the call, DONE after the result); 0 when not in Redis. */
    default long redisWrites() {
        return 0;
    }

    @Override
    void close();
}
