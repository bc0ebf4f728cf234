package dev.sluice.sender;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.OutboundMessage;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serializer;

/** Avro values in the Confluent wire format against {@code schema.registry.url}. */
final class Serdes {
    private Serdes() {
    }

    static Deserializer<OutboundMessage> outboundDeserializer(SenderConfig config) {
        throw new UnsupportedOperationException("waiting for dev.sluice.schemas.SpecificAvroSerde");
    }

    static Serializer<DeliveryResult> resultSerializer(SenderConfig config) {
        throw new UnsupportedOperationException("waiting for dev.sluice.schemas.SpecificAvroSerde");
    }
}
