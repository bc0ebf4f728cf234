package dev.sluice.app.tools;

import java.util.LinkedHashSet;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Counts what a tool decoded and what it could not, keeping the first failure's reason: when records were read and
 * none decoded (the wrong schema registry, or a topic of another schema), that is an error to report, not "0 shown".
 * Used on the command's own thread.
 */
final class DecodeTally {
    private long decoded;
    private long undecodable;
    private String firstReason;
    private final Set<String> undecodableTopics = new LinkedHashSet<>();

    /** The decoded value, or null for a null value (tombstone, not counted) or an undecodable one (counted). */
    <T> T decode(Deserializer<T> d, ConsumerRecord<byte[], byte[]> r) {
        if (r.value() == null) {
            return null;
        }
        try {
            T value = d.deserialize(r.topic(), r.headers(), r.value());
            decoded++;
            return value;
        } catch (RuntimeException e) {
            undecodable++;
            undecodableTopics.add(r.topic());
            if (firstReason == null) {
                firstReason = reason(e);
            }
            return null;
        }
    }

    long undecodable() {
        return undecodable;
    }

    /** True when records were read and not one of them decoded. */
    boolean noneDecoded() {
        return undecodable > 0 && decoded == 0;
    }

    /** The one line saying so, naming the topics, the registry and the first reason (no secret: {@link ToolErrors#safe}). */
    ToolException noneDecodedError(String registryUrl) {
        return new ToolException("none of the " + undecodable + " records read from " + String.join(" and ", undecodableTopics)
                + " could be decoded with the schema registry at " + ToolErrors.safe(registryUrl) + " (first error: "
                + ToolErrors.safe(firstReason) + "); is schema.registry.url the registry these records were written with, and the topic the right one?");
    }

    /** The exception's message and its causes', on one line. */
    static String reason(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = e; t != null && sb.length() < 400; t = t.getCause() == t ? null : t.getCause()) {
            String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
            if (sb.indexOf(m) < 0) {
                sb.append(sb.length() == 0 ? "" : ": ").append(m);
            }
        }
        return sb.toString().replaceAll("\\s+", " ").trim();
    }
}
