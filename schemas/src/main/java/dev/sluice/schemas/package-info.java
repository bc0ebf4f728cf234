/**
 * Avro in the Confluent wire format: {@link dev.sluice.schemas.SpecificAvroSerde} and a small client for the
 * Confluent Schema Registry REST subset ({@link dev.sluice.schemas.CachedSchemaRegistryClient}), plus an in-memory
 * registry for tests. Generated Avro classes live in {@code dev.sluice.avro}.
 */
package dev.sluice.schemas;
