package dev.sluice.schemas;

import org.apache.avro.Schema;

/**
 * The subset of the Confluent Schema Registry API Sluice needs: register a schema under a subject and
 * look a schema up by its global id. Implementations are thread-safe and cache, so the serde hot path
 * does not call the registry again for a schema it has already seen.
 *
 * <p>Subjects follow the Confluent TopicNameStrategy: {@code <topic>-value} and {@code <topic>-key}.
 */
public interface SchemaRegistryClient {

    /**
     * Registers {@code schema} under {@code subject} (idempotent: an already registered schema returns
     * its existing id) and returns the global schema id.
     *
     * @throws SchemaRegistryException on any failure, classified retriable or permanent
     */
    int register(String subject, Schema schema);

    /**
     * The schema with global id {@code id}.
     *
     * @throws SchemaRegistryException with {@code errorCode() == 40403} when the id is unknown
     */
    Schema getById(int id);

    /**
     * The id of {@code schema} already registered under {@code subject}, without registering it
     * ({@code POST /subjects/{subject}}): what a client with read-only credentials can do.
     *
     * @throws SchemaRegistryException 40401 (subject) or 40403 (schema) when it is not registered there
     */
    default int lookup(String subject, Schema schema) {
        throw new SchemaRegistryException(SchemaRegistryException.NO_RESPONSE, 40401, getClass().getSimpleName()
                + " cannot look schemas up; subject " + subject, false, null);
    }
}
