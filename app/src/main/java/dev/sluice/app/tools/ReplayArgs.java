package dev.sluice.app.tools;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import dev.sluice.topology.DeadLetterHeaders;
import org.apache.avro.Schema;

/**
 * How {@code sluice replay} reads its {@code --filter} values. A value it cannot use is a usage
 * error naming the option, the value and what is allowed (picocli prints it with the usage; exit code 2, as for any
 * other usage error), never a filter that silently matches nothing. Stateless.
 */
final class ReplayArgs {
    private ReplayArgs() {
    }

    /**
     * {@code FIELD=V1,V2} → field → {V1, V2}. With a {@code schema} (results): the field must exist, and a field whose
     * type is an enum (also when nullable: {@code status}, {@code lane}, {@code event_class}) takes only its symbols.
     *
     * @throws IllegalArgumentException naming {@code --filter}, the field or value and the allowed ones
     */
    static Map<String, Set<String>> filters(Map<String, String> given, Schema schema) {
        Map<String, Set<String>> out = new LinkedHashMap<>();
        given.forEach((field, values) -> {
            Set<String> wanted = new LinkedHashSet<>(Arrays.asList(values.split(",")));
            if (schema != null) {
                Schema.Field f = schema.getField(field);
                if (f == null) {
                    throw new IllegalArgumentException("--filter " + field + "=" + values + ": no such field in "
                            + schema.getName() + " (fields: " + schema.getFields().stream().map(Schema.Field::name)
                            .collect(Collectors.joining(", ")) + ")");
                }
                List<String> symbols = enumSymbols(f.schema());
                if (symbols != null) {
                    for (String v : wanted) {
                        if (!symbols.contains(v)) {
                            throw new IllegalArgumentException("--filter " + field + "=" + values + ": '" + v + "' is not a "
                                    + field + " of a " + schema.getName() + "; allowed: " + String.join(", ", symbols));
                        }
                    }
                }
            }
            out.put(field, wanted);
        });
        return out;
    }

    /** The dead-letter headers a filter may name, without their common prefix. */
    static final List<String> DEAD_LETTER_FIELDS = List.of(DeadLetterHeaders.REASON, DeadLetterHeaders.ERROR_CLASS,
            DeadLetterHeaders.SOURCE_TOPIC, DeadLetterHeaders.SOURCE_PARTITION, DeadLetterHeaders.SOURCE_OFFSET).stream()
            .map(h -> h.substring(DeadLetterHeaders.PREFIX.length())).toList();

    /**
     * {@code HEADER=V1,V2} for the dead-letter topic: the header must be one the topology writes ({@code reason},
     * {@code error.class}, {@code source.topic}, ..., also with their {@code sluice.dlq.} prefix).
     *
     * @throws IllegalArgumentException naming {@code --filter}, the name and the allowed ones
     */
    static Map<String, Set<String>> deadLetterFilters(Map<String, String> given) {
        given.forEach((field, values) -> {
            String bare = field.startsWith(DeadLetterHeaders.PREFIX) ? field.substring(DeadLetterHeaders.PREFIX.length()) : field;
            if (!DEAD_LETTER_FIELDS.contains(bare)) {
                throw new IllegalArgumentException("--filter " + field + "=" + values + ": no such dead-letter header (headers: "
                        + String.join(", ", DEAD_LETTER_FIELDS) + ", also with the prefix " + DeadLetterHeaders.PREFIX + ")");
            }
        });
        return filters(given, null);
    }

    /** The symbols of an enum type, or of the enum in a union with null; null for any other type. */
    private static List<String> enumSymbols(Schema type) {
        if (type.getType() == Schema.Type.ENUM) {
            return type.getEnumSymbols();
        }
        if (type.getType() == Schema.Type.UNION) {
            for (Schema branch : type.getTypes()) {
                if (branch.getType() == Schema.Type.ENUM) {
                    return branch.getEnumSymbols();
                }
            }
        }
        return null;
    }
}
