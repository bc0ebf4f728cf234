package dev.sluice.sender;

/**
 * Whether a message already has a result on {@code delivery.results}. Asked only after a crash, for a message
 * whose idempotency key says "sent" but not "result written": the previous owner may have died between the
 * result's write and the key's update, and a second result must not be written then.
 */
public interface ResultLookup extends AutoCloseable {
    /** Never finds anything: the result is written again (at most one duplicate per such message). */
    ResultLookup NONE = new ResultLookup() {
        @Override
        public boolean hasResult(String resultKey, String messageId, long sinceMs) {
            return false;
        }

        @Override
        public void close() {
        }
    };

    /**
     * @param resultKey the record key the result was written with (the chat id)
     * @param messageId the message id
     * @param sinceMs   epoch ms before which the result cannot have been written
     * @return true when a result of {@code messageId} is on the topic; false when none is, or when unsure
     */
    boolean hasResult(String resultKey, String messageId, long sinceMs);

    @Override
    void close();
}
