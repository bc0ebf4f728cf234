package dev.sluice.app.tools;

/**
 * One input line that cannot become a record: names the 1-based line number, the field and the value.
 * The message is what {@code sluice produce} prints; it never carries more of the line than the value.
 */
public final class InvalidLineException extends RuntimeException {
    private final long line;
    private final String field;

    public InvalidLineException(long line, String field, String message) {
        super("line " + line + ", field '" + field + "': " + message);
        this.line = line;
        this.field = field;
    }

    /** 1-based line number in the input file. */
    public long line() {
        return line;
    }

    /** The JSON field at fault ({@code (line)} when the line itself is not a JSON object). */
    public String field() {
        return field;
    }
}
