package dev.sluice.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.avro.AvroTypeException;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;
import org.apache.avro.SchemaParseException;

/**
 * The state of {@link InProcessSchemaRegistry}: Avro schemas with global ids, subjects with versions, schema
 * references, and compatibility levels (global and per subject), with the Confluent Schema Registry's
 * semantics and error codes.
 *
 * <ul>
 *   <li>A schema's identity is its text plus its references. Without references the text is the parsed
 *       schema re-serialised (whitespace does not matter); with references it is the registered JSON,
 *       re-serialised by Jackson, so referenced types are not inlined (clients resolve them by the
 *       references, as with Confluent).</li>
 *   <li>The same schema gets the same global id under every subject; registering it again under a subject
 *       that has it returns its id without a compatibility check.</li>
 *   <li>A new version is checked against the subject's latest version ({@code BACKWARD}, {@code FORWARD},
 *       {@code FULL}) or all of them ({@code *_TRANSITIVE}) with Avro's {@link SchemaCompatibility}; the
 *       global level defaults to {@code BACKWARD}, as in Confluent. An incompatible schema is HTTP 409,
 *       error code 409.</li>
 * </ul>
 *
 * <p>Error codes: 40401 subject not found, 40402 version not found, 40403 schema not found, 40408 subject has
 * no subject-level compatibility, 42201 invalid schema (also an unresolvable reference), 42202 invalid version,
 * 42203 invalid compatibility level, 409 incompatible schema. No deletes of schemas; state in memory only.
 *
 * <p>Thread-safety: every method is {@code synchronized} on this store; the registry's HTTP worker threads
 * call it concurrently.
 */
final class RegistryStore {
    static final List<String> LEVELS = List.of("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD",
            "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE");
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A schema reference: the named type {@code name} is defined by version {@code version} of {@code subject}. */
    record Reference(String name, String subject, int version) {
    }

    private record Stored(int id, String text, List<Reference> references) {
    }

    private final Map<String, Integer> idByIdentity = new HashMap<>();
    private final Map<Integer, Stored> byId = new HashMap<>();
    private final Map<String, List<Integer>> versionsBySubject = new TreeMap<>();
    private final Map<String, String> levelBySubject = new HashMap<>();
    private String globalLevel = "BACKWARD";
    private int nextId = 1;

    synchronized int register(String subject, String text, List<Reference> references) {
        Schema schema = resolve(text, references);
        String identity = identity(schema, text, references);
        Integer existing = idByIdentity.get(identity);
        List<Integer> versions = versionsBySubject.getOrDefault(subject, List.of());
        if (existing != null && versions.contains(existing)) {
            return existing;
        }
        List<String> problems = incompatibilities(subject, versions, schema, true);
        if (!problems.isEmpty()) {
            throw new ApiError(409, 409, "Schema being registered is incompatible with an earlier schema for subject \""
                    + subject + "\", details: " + problems);
        }
        int id;
        if (existing != null) {
            id = existing;
        } else {
            id = nextId++;
            idByIdentity.put(identity, id);
            byId.put(id, new Stored(id, canonicalText(schema, text, references), List.copyOf(references)));
        }
        versionsBySubject.computeIfAbsent(subject, s -> new ArrayList<>()).add(id);
        return id;
    }

    synchronized JsonNode lookup(String subject, String text, List<Reference> references) {
        List<Integer> versions = subjectVersions(subject);
        Integer id = idByIdentity.get(identity(resolve(text, references), text, references));
        int index = id == null ? -1 : versions.indexOf(id);
        if (index < 0) {
            throw new ApiError(404, 40403, "Schema not found");
        }
        return versionNode(subject, index + 1, id);
    }

    synchronized JsonNode version(String subject, String versionText) {
        List<Integer> versions = subjectVersions(subject);
        int version = versionNumber(versions, versionText);
        return versionNode(subject, version, versions.get(version - 1));
    }

    synchronized String versionSchemaText(String subject, String versionText) {
        List<Integer> versions = subjectVersions(subject);
        return byId.get(versions.get(versionNumber(versions, versionText) - 1)).text();
    }

    synchronized List<Integer> versions(String subject) {
        List<Integer> numbers = new ArrayList<>();
        for (int v = 1; v <= subjectVersions(subject).size(); v++) {
            numbers.add(v);
        }
        return numbers;
    }

    synchronized List<String> subjects() {
        return new ArrayList<>(versionsBySubject.keySet());
    }

    synchronized JsonNode schemaById(int id) {
        Stored s = stored(id);
        ObjectNode node = JSON.createObjectNode().put("schema", s.text());
        addReferences(node, s.references());
        return node;
    }

    /** {@code [{"subject":..,"version":..}]} of every subject version holding schema {@code id}. */
    synchronized JsonNode subjectVersionsOfId(int id) {
        stored(id);
        ArrayNode out = JSON.createArrayNode();
        versionsBySubject.forEach((subject, ids) -> {
            for (int i = 0; i < ids.size(); i++) {
                if (ids.get(i) == id) {
                    out.addObject().put("subject", subject).put("version", i + 1);
                }
            }
        });
        return out;
    }

    synchronized int schemaCount() {
        return byId.size();
    }

    synchronized String globalLevel() {
        return globalLevel;
    }

    synchronized String setGlobalLevel(String level) {
        globalLevel = level(level);
        return globalLevel;
    }

    /** The subject's own level, else 40408 unless {@code defaultToGlobal}. */
    synchronized String subjectLevel(String subject, boolean defaultToGlobal) {
        String level = levelBySubject.get(subject);
        if (level != null) {
            return level;
        }
        if (defaultToGlobal) {
            return globalLevel;
        }
        throw new ApiError(404, 40408, "Subject '" + subject + "' does not have subject-level compatibility configured");
    }

    synchronized String setSubjectLevel(String subject, String level) {
        String valid = level(level);
        levelBySubject.put(subject, valid);
        return valid;
    }

    synchronized String deleteSubjectLevel(String subject) {
        String previous = subjectLevel(subject, false);
        levelBySubject.remove(subject);
        return previous;
    }

    /**
     * Whether {@code text} could be registered under {@code subject}: against version {@code versionText}
     * ({@code latest} or a number), or, when null, against what the subject's level requires.
     */
    synchronized List<String> compatibility(String subject, String versionText, String text, List<Reference> references) {
        List<Integer> versions = subjectVersions(subject);
        Schema schema = resolve(text, references);
        if (versionText == null) {
            return incompatibilities(subject, versions, schema, true);
        }
        int version = versionNumber(versions, versionText);
        return incompatibilities(subject, versions.subList(0, version), schema, false);
    }

    /**
     * Problems of {@code schema} as the subject's next version under its level: against every version when
     * transitive ({@code all}), else the latest; or, with {@code all} false, against the last of {@code versions}.
     */
    private List<String> incompatibilities(String subject, List<Integer> versions, Schema schema, boolean all) {
        String level = levelBySubject.getOrDefault(subject, globalLevel);
        if (level.equals("NONE") || versions.isEmpty()) {
            return List.of();
        }
        List<Integer> against = all && level.endsWith("_TRANSITIVE") ? versions : versions.subList(versions.size() - 1, versions.size());
        boolean backward = level.startsWith("BACKWARD") || level.startsWith("FULL");
        boolean forward = level.startsWith("FORWARD") || level.startsWith("FULL");
        List<String> problems = new ArrayList<>();
        for (int id : against) {
            Schema old = resolve(byId.get(id).text(), byId.get(id).references());
            if (backward) {
                describe(SchemaCompatibility.checkReaderWriterCompatibility(schema, old), "BACKWARD", problems);
            }
            if (forward) {
                describe(SchemaCompatibility.checkReaderWriterCompatibility(old, schema), "FORWARD", problems);
            }
        }
        return problems;
    }

    private static void describe(SchemaCompatibility.SchemaPairCompatibility result, String direction, List<String> problems) {
        if (result.getType() != SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE) {
            for (SchemaCompatibility.Incompatibility i : result.getResult().getIncompatibilities()) {
                problems.add("{direction:" + direction + ", type:" + i.getType() + ", location:" + i.getLocation()
                        + ", message:" + i.getMessage() + "}");
            }
        }
    }

    /** Parses {@code text} after the schemas it references (depth first), so named types resolve. */
    private Schema resolve(String text, List<Reference> references) {
        Schema.Parser parser = new Schema.Parser();
        Set<String> seen = new HashSet<>();
        for (Reference r : references) {
            parseReference(parser, r, seen, 0);
        }
        try {
            return parser.parse(text);
        } catch (SchemaParseException | AvroTypeException | NullPointerException e) {
            throw new ApiError(422, 42201, "Invalid schema " + text + ", details: " + e.getMessage());
        }
    }

    private void parseReference(Schema.Parser parser, Reference r, Set<String> seen, int depth) {
        if (depth > 32) {
            throw new ApiError(422, 42201, "Invalid schema: references nest deeper than 32 (a cycle?)");
        }
        if (!seen.add(r.subject() + "/" + r.version())) {
            return;
        }
        List<Integer> versions = versionsBySubject.get(r.subject());
        if (versions == null || r.version() < 1 || r.version() > versions.size()) {
            throw new ApiError(422, 42201, "Invalid schema: reference " + r.name() + " to subject '" + r.subject()
                    + "' version " + r.version() + " not found");
        }
        Stored s = byId.get(versions.get(r.version() - 1));
        for (Reference inner : s.references()) {
            parseReference(parser, inner, seen, depth + 1);
        }
        try {
            parser.parse(s.text());
        } catch (SchemaParseException | AvroTypeException e) {
            throw new ApiError(422, 42201, "Invalid schema: reference " + r.name() + ": " + e.getMessage());
        }
    }

    private static String identity(Schema schema, String text, List<Reference> references) {
        return canonicalText(schema, text, references) + "\u0000" + references;
    }

    private static String canonicalText(Schema schema, String text, List<Reference> references) {
        if (references.isEmpty()) {
            return schema.toString();
        }
        try {
            return JSON.readTree(text).toString();
        } catch (IOException e) {
            throw new ApiError(422, 42201, "Invalid schema: " + e.getMessage());
        }
    }

    private List<Integer> subjectVersions(String subject) {
        List<Integer> versions = versionsBySubject.get(subject);
        if (versions == null) {
            throw new ApiError(404, 40401, "Subject '" + subject + "' not found.");
        }
        return versions;
    }

    private static int versionNumber(List<Integer> versions, String versionText) {
        int version;
        if (versionText.equals("latest") || versionText.equals("-1")) {
            version = versions.size();
        } else {
            try {
                version = Integer.parseInt(versionText);
            } catch (NumberFormatException e) {
                version = 0;
            }
            if (version < 1) {
                throw new ApiError(422, 42202, "The specified version '" + versionText + "' is not a valid version id. "
                        + "Allowed values are between [1, 2^31-1] and the string \"latest\"");
            }
        }
        if (version < 1 || version > versions.size()) {
            throw new ApiError(404, 40402, "Version " + versionText + " not found.");
        }
        return version;
    }

    private Stored stored(int id) {
        Stored s = byId.get(id);
        if (s == null) {
            throw new ApiError(404, 40403, "Schema " + id + " not found");
        }
        return s;
    }

    private JsonNode versionNode(String subject, int version, int id) {
        Stored s = byId.get(id);
        ObjectNode node = JSON.createObjectNode().put("subject", subject).put("version", version).put("id", id)
                .put("schema", s.text());
        addReferences(node, s.references());
        return node;
    }

    private static void addReferences(ObjectNode node, List<Reference> references) {
        if (!references.isEmpty()) {
            ArrayNode refs = node.putArray("references");
            references.forEach(r -> refs.addObject().put("name", r.name()).put("subject", r.subject()).put("version", r.version()));
        }
    }

    private static String level(String level) {
        String norm = level == null ? "" : level.trim().toUpperCase(Locale.ROOT);
        if (!LEVELS.contains(norm)) {
            throw new ApiError(422, 42203, "Invalid compatibility level. Valid values are none, backward, forward, full, "
                    + "backward_transitive, forward_transitive, and full_transitive");
        }
        return norm;
    }

    /** An error answered in Confluent's shape: HTTP {@code status}, body {@code {"error_code":code,"message":..}}. */
    static final class ApiError extends RuntimeException {
        final int status;
        final int code;

        ApiError(int status, int code, String message) {
            super(message);
            this.status = status;
            this.code = code;
        }
    }
}
