package dev.sluice.schemas;

import java.util.HashSet;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.avro.util.ClassSecurityValidator;

/**
 * Avro 1.12.1+ loads classes named in schemas only when they are trusted
 * ({@link ClassSecurityValidator}, the fix for CVE-2024-47561's follow-ups). Generated classes are not
 * trusted by default, so reading into {@code dev.sluice.avro.Notification} would fail with a
 * SecurityException. The serde trusts exactly the classes of the types it was asked to read or write
 * (the record and the records/enums/fixed types nested in its schema), nothing named by incoming data.
 * Sluice's own generated classes are trusted through {@link AvroTrust}; this also covers other types.
 */
final class AvroClassTrust {
    private static final Set<String> trusted = new HashSet<>();

    private AvroClassTrust() {
    }

    static synchronized void trust(Schema schema) {
        AvroTrust.ensure();
        Set<String> names = new HashSet<>();
        collect(schema, names, new HashSet<>());
        names.removeAll(trusted);
        if (names.isEmpty()) {
            return;
        }
        ClassSecurityValidator.Builder builder = ClassSecurityValidator.builder();
        names.forEach(builder::add);
        ClassSecurityValidator.setGlobal(ClassSecurityValidator.composite(ClassSecurityValidator.getGlobal(), builder.build()));
        trusted.addAll(names);
    }

    private static void collect(Schema schema, Set<String> names, Set<Schema> seen) {
        if (!seen.add(schema)) {
            return;
        }
        switch (schema.getType()) {
            case RECORD -> {
                names.add(schema.getFullName());
                schema.getFields().forEach(f -> collect(f.schema(), names, seen));
            }
            case ENUM, FIXED -> names.add(schema.getFullName());
            case ARRAY -> collect(schema.getElementType(), names, seen);
            case MAP -> collect(schema.getValueType(), names, seen);
            case UNION -> schema.getTypes().forEach(t -> collect(t, names, seen));
            default -> {
            }
        }
    }
}
