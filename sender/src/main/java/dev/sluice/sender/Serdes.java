package dev.sluice.sender;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.avro.SenderStatus;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.schemas.SpecificAvroSerializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serializer;

/** Avro values in the Confluent wire format against the configured schema registry. */
final class Serdes {
    private Serdes() {
    }

    static SchemaRegistryClient registry(SenderConfig config) {
        return CachedSchemaRegistryClient.fromConfigs(config.schemaRegistryProperties());
    }

    static Deserializer<OutboundMessage> outboundDeserializer(SchemaRegistryClient registry) {
        return new SpecificAvroSerde<>(registry, OutboundMessage.class).deserializer();
    }

    static Serializer<SenderStatus> statusSerializer(SchemaRegistryClient registry, boolean autoRegister) {
        return new SpecificAvroSerializer<>(registry, false, autoRegister);
    }

    static Deserializer<DeliveryResult> resultDeserializer(SchemaRegistryClient registry) {
        return new SpecificAvroSerde<>(registry, DeliveryResult.class).deserializer();
    }

    /** @param autoRegister {@code schema.registry.auto.register}: false looks the schema up only */
    static Serializer<DeliveryResult> resultSerializer(SchemaRegistryClient registry, boolean autoRegister) {
        return new SpecificAvroSerializer<>(registry, false, autoRegister);
    }
}
