package dev.sluice.sender.http;

import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.Locale;
import java.util.Optional;

/**
 * What a successful answer must look like; a 2xx that fails it is a soft limit. Many providers signal a
 * limit without a 429: a 200 with a captcha page, an empty list, a list silently cut short. Such an answer
 * is a throttle signal (retried later), never a delivery.
 *
 * @param expectedStatus the status a delivery answers with, or 0 for any 2xx
 * @param contentType    the media type the body must have (parameters such as {@code charset} ignored,
 *                       case-insensitive), or null for any
 * @param jsonPointer    an RFC 6901 JSON pointer (e.g. {@code /id}, {@code /data/0}) that must exist in the JSON
 *                       body and not be null, or null for none
 * @param minBytes       the smallest body a delivery answers with, in bytes, &ge; 0
 */
public record ResponseCheck(int expectedStatus, String contentType, String jsonPointer, int minBytes) {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Any 2xx passes. */
    public static final ResponseCheck ANY_2XX = new ResponseCheck(0, null, null, 0);

    public ResponseCheck {
        if (expectedStatus != 0 && (expectedStatus < 200 || expectedStatus > 299)) {
            throw new IllegalArgumentException("expected status must be a 2xx or 0, was " + expectedStatus);
        }
        if (minBytes < 0) {
            throw new IllegalArgumentException("minBytes must be >= 0, was " + minBytes);
        }
        if (jsonPointer != null) {
            JsonPointer.compile(jsonPointer); // IllegalArgumentException on a malformed pointer
        }
        contentType = contentType == null || contentType.isBlank() ? null : contentType.trim().toLowerCase(Locale.ROOT);
    }

    /** A checked answer: the failure (null when it passed) and the node the pointer found (null if none). */
    public record Verdict(String failure, JsonNode found) {
        public boolean passed() {
            return failure == null;
        }
    }

    /**
     * @param status      the HTTP status, a 2xx
     * @param contentType the {@code Content-Type} header, may be null
     * @param body        the body bytes
     */
    public Verdict check(int status, String contentType, byte[] body) {
        if (expectedStatus != 0 && status != expectedStatus) {
            return fail("status " + status + ", expected " + expectedStatus);
        }
        if (this.contentType != null && !this.contentType.equals(mediaType(contentType))) {
            return fail("content type " + (contentType == null ? "none" : "'" + mediaType(contentType) + "'")
                    + ", expected '" + this.contentType + "'");
        }
        if (body.length < minBytes) {
            return fail("body of " + body.length + " bytes, expected at least " + minBytes);
        }
        if (jsonPointer == null) {
            return new Verdict(null, null);
        }
        JsonNode root;
        try {
            root = JSON.readTree(body);
        } catch (IOException e) {
            return fail("body is not JSON, expected " + jsonPointer);
        }
        JsonNode found = root == null ? null : root.at(jsonPointer);
        if (found == null || found.isMissingNode() || found.isNull()) {
            return fail("JSON pointer " + jsonPointer + " is missing");
        }
        return new Verdict(null, found);
    }

    private static Verdict fail(String why) {
        return new Verdict("soft limit: " + why, null);
    }

    /** {@code application/json; charset=utf-8} → {@code application/json}. */
    static String mediaType(String header) {
        if (header == null) {
            return null;
        }
        int semi = header.indexOf(';');
        return (semi < 0 ? header : header.substring(0, semi)).trim().toLowerCase(Locale.ROOT);
    }
}
