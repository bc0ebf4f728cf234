package dev.sluice.schemas;

/**
 * A Schema Registry call failed. Carries the registry's {@code error_code} (Confluent REST API: e.g.
 * {@code 40401} subject not found, {@code 40403} schema not found, {@code 42201} invalid schema,
 * {@code 50001} backend error) and the HTTP status, and says whether a retry can help.
 *
 * <p>Classification: retriable = I/O errors, timeouts, HTTP 5xx, 408 and 429 (the registry or the
 * network is the problem); permanent = other 4xx (the request is wrong: retrying returns the same).
 * Messages never contain credentials.
 */
public class SchemaRegistryException extends RuntimeException {
    /** Confluent error code: schema not found (GET /schemas/ids/{id} for an unknown id). */
    public static final int SCHEMA_NOT_FOUND = 40403;
    /** Confluent error code: subject not found. */
    public static final int SUBJECT_NOT_FOUND = 40401;
    /** Confluent error code: version not found. */
    public static final int VERSION_NOT_FOUND = 40402;
    /** Confluent error code: the schema text is not a valid Avro schema. */
    public static final int INVALID_SCHEMA = 42201;
    /** Used when no HTTP answer arrived (connect refused, timeout). */
    public static final int NO_RESPONSE = -1;

    private final int httpStatus;
    private final int errorCode;
    private final boolean retriable;

    public SchemaRegistryException(int httpStatus, int errorCode, String message, boolean retriable, Throwable cause) {
        super(message, cause);
        this.httpStatus = httpStatus;
        this.errorCode = errorCode;
        this.retriable = retriable;
    }

    /** An HTTP error answer; classified by status. */
    public static SchemaRegistryException fromResponse(int httpStatus, int errorCode, String message) {
        return new SchemaRegistryException(httpStatus, errorCode, message, isRetriableStatus(httpStatus), null);
    }

    /** No answer at all (I/O error, timeout): always retriable. */
    public static SchemaRegistryException noResponse(String message, Throwable cause) {
        return new SchemaRegistryException(NO_RESPONSE, NO_RESPONSE, message, true, cause);
    }

    static boolean isRetriableStatus(int status) {
        return status >= 500 || status == 408 || status == 429;
    }

    /** HTTP status of the answer, or {@link #NO_RESPONSE}. */
    public int httpStatus() {
        return httpStatus;
    }

    /** Registry {@code error_code} (e.g. 40403), the HTTP status when the body had none, or {@link #NO_RESPONSE}. */
    public int errorCode() {
        return errorCode;
    }

    /** True when retrying later can succeed (5xx, 408, 429, I/O); false for permanent 4xx errors. */
    public boolean retriable() {
        return retriable;
    }
}
