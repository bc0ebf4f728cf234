package dev.sluice.sender;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.sender.idempotency.SentMarks;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes results to {@code delivery.results} (key: chat id) with an idempotent producer (acks=all) and
 * marks the message's offset done only when Kafka acknowledged the result; then also raises the message's
 * idempotency key to "result written", so a redelivery after a crash writes no second result.
 */
final class KafkaResultSink implements ResultSink {
    private static final Logger log = LoggerFactory.getLogger(KafkaResultSink.class);
    private final Producer<String, DeliveryResult> producer;
    private final String topic;
    private final OffsetTracker offsets;
    private final SentMarks sentMarks;

    KafkaResultSink(Producer<String, DeliveryResult> producer, String topic, OffsetTracker offsets,
                    SentMarks sentMarks) {
        this.producer = producer;
        this.topic = topic;
        this.offsets = offsets;
        this.sentMarks = sentMarks;
    }

    @Override
    public void emit(PendingMessage message, DeliveryResult result) {
        producer.send(new ProducerRecord<>(topic, result.getChatId(), result), (metadata, error) -> {
            if (error == null) {
                offsets.done(message.partition(), message.offset());
                if (result.getStatus() == DeliveryStatus.DELIVERED || result.getStatus() == DeliveryStatus.UNCERTAIN) {
                    // Only a message that reached the provider carries a sent mark to raise. A FAILED or EXPIRED one
                    // gets none, so a replay of it (same id, e.g. `sluice replay --filter status=FAILED`) is sent.
                    sentMarks.markResultWritten(message.message().getBotId(), message.message().getId());
                }
            } else {
                // The offset stays pending: it is never committed, so the message is redelivered after a restart.
                log.error("could not write the {} result of message {} to {}: {}", result.getStatus(),
                        result.getMessageId(), topic, error.toString());
            }
        });
    }

    @Override
    public void alreadyFinished(PendingMessage message) {
        offsets.done(message.partition(), message.offset());
    }
}
