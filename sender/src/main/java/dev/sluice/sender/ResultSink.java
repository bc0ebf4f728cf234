package dev.sluice.sender;

import dev.sluice.avro.DeliveryResult;

/**
 * Where terminal results go ({@code delivery.results}). The sink marks the message's offset done once the
 * result is durably written, so offsets are committed only up to messages that have a result.
 */
public interface ResultSink {
    void emit(PendingMessage message, DeliveryResult result);

    /**
     * The message already has its result (written by a previous owner, known from its idempotency key): its
     * offset is done and no second result is written.
     */
    void alreadyFinished(PendingMessage message);
}
