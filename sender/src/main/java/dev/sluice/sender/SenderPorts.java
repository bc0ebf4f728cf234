package dev.sluice.sender;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.avro.SenderStatus;
import dev.sluice.sender.budget.BudgetPort;
import dev.sluice.sender.idempotency.SentMarks;
import dev.sluice.sender.provider.Transport;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serializer;

/**
 * The ports a sender uses besides Kafka; the {@link SenderService} owns and closes all of them. Production ports
 * come from {@link SenderWiring#production}; tests and the demo pass their own.
 *
 * <p>Thread: an immutable record, built before the service; each port is thread-safe (sending threads share them).
 *
 * @param valueDeserializer  reads OutboundMessage values of the outbox topics
 * @param resultSerializer   writes DeliveryResult values to {@code delivery.results}
 * @param statusSerializer   writes SenderStatus values to {@code sender.status}
 * @param budget             the shared provider budget
 * @param transport          the provider
 * @param sentMarks          idempotency keys of sent messages
 * @param resultDeserializer reads {@code delivery.results} when a crash left a "sent" key behind; null: never look
 */
public record SenderPorts(Deserializer<OutboundMessage> valueDeserializer, Serializer<DeliveryResult> resultSerializer,
                          Serializer<SenderStatus> statusSerializer, BudgetPort budget, Transport transport,
                          SentMarks sentMarks, Deserializer<DeliveryResult> resultDeserializer) {
}
