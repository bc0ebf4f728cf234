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
    // Fast path like the HTTP client's cache: Schema.toString() is far slower than a hash lookup.
    private final Map<String, Map<Schema, Integer>> cache = new ConcurrentHashMap<>();

    @Override
    public int register(String subject, Schema schema) {
        Integer cached = cache.getOrDefault(subject, Map.of()).get(schema);
        if (cached != null) {
            return cached;
        }
        int id = registerSlow(subject, schema);
        cache.computeIfAbsent(subject, s -> new ConcurrentHashMap<>()).put(schema, id);
        return id;
    }

    private synchronized int registerSlow(String subject, Schema schema) {
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
    public synchronized int lookup(String subject, Schema schema) {
        Integer id = idBySchemaText.get(schema.toString());
        if (id == null || !idsBySubject.getOrDefault(subject, Map.of()).containsKey(id)) {
            throw SchemaRegistryException.fromResponse(404, SchemaRegistryException.SCHEMA_NOT_FOUND,
                    "Schema not found under subject " + subject);
        }
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
