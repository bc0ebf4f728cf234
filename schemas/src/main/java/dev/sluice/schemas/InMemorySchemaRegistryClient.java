package dev.sluice.schemas;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.avro.Schema;

/**
 * A registry held in memory, for unit tests and {@code TopologyTestDriver}. Same id rules as the
 * Confluent registry: ids are global and increasing from 1, and the same schema text registered under
 * any subject gets the same id. No compatibility checks.
 */
public final class InMemorySchemaRegistryClient implements SchemaRegistryClient {
    private final Map<String, Integer> idBySchemaText = new ConcurrentHashMap<>();
    private final Map<Integer, Schema> schemaById = new ConcurrentHashMap<>();
    private final Map<String, Map<Integer, Boolean>> idsBySubject = new ConcurrentHashMap<>();
    private final AtomicInteger nextId = new AtomicInteger(1);

    @Override
    public synchronized int register(String subject, Schema schema) {
        String text = schema.toString();
        int id = idBySchemaText.computeIfAbsent(text, t -> {
            int newId = nextId.getAndIncrement();
            schemaById.put(newId, new Schema.Parser().parse(t));
            return newId;
        });
        idsBySubject.computeIfAbsent(subject, s -> new ConcurrentHashMap<>()).put(id, Boolean.TRUE);
        return id;
    }

    @Override
    public Schema getById(int id) {
        Schema schema = schemaById.get(id);
        if (schema == null) {
            throw SchemaRegistryException.fromResponse(404, SchemaRegistryException.SCHEMA_NOT_FOUND,
                    "Schema not found: id " + id);
        }
        return schema;
    }

    /** Subjects registered so far (for assertions in tests). */
    public java.util.Set<String> subjects() {
        return java.util.Set.copyOf(idsBySubject.keySet());
    }
}
