package dev.sluice.app.plan;

import java.io.IOException;
import java.io.Reader;
import java.util.ArrayList;
import java.util.List;

/**
 * A small RFC 4180 CSV reader: comma-separated fields, fields in double quotes may hold commas,
 * line breaks and doubled quotes ({@code ""}); CRLF or LF line ends; a final line end is optional.
 * Each record remembers the line it started on, for error messages.
 */
final class CsvRecords {

    /** One record and the 1-based line on which it starts. */
    record Row(int line, List<String> fields) {
    }

    private CsvRecords() {
    }

    /**
     * @throws CsvFormatException when a quoted field is not closed or text follows a closing quote
     */
    static List<Row> read(Reader in) throws IOException {
        List<Row> rows = new ArrayList<>();
        List<String> fields = new ArrayList<>();
        StringBuilder field = new StringBuilder();
        int line = 1;
        int rowLine = 1;
        boolean quoted = false;
        boolean afterQuote = false;
        boolean rowHasContent = false;
        int c;
        while ((c = in.read()) != -1) {
            char ch = (char) c;
            if (quoted) {
                if (ch == '"') {
                    in.mark(1);
                    int next = in.read();
                    if (next == '"') {
                        field.append('"');
                        continue;
                    }
                    quoted = false;
                    afterQuote = true;
                    if (next == -1) {
                        break;
                    }
                    ch = (char) next;
                } else {
                    if (ch == '\n') {
                        line++;
                    }
                    field.append(ch);
                    continue;
                }
            }
            if (ch == ',') {
                fields.add(field.toString());
                field.setLength(0);
                afterQuote = false;
                rowHasContent = true;
            } else if (ch == '\n' || ch == '\r') {
                if (ch == '\r') {
                    in.mark(1);
                    if (in.read() != '\n') {
                        in.reset();
                    }
                }
                if (rowHasContent || field.length() > 0 || afterQuote) {
                    fields.add(field.toString());
                    rows.add(new Row(rowLine, List.copyOf(fields)));
                }
                fields.clear();
                field.setLength(0);
                afterQuote = false;
                rowHasContent = false;
                line++;
                rowLine = line;
            } else if (ch == '"' && field.length() == 0 && !afterQuote) {
                quoted = true;
                rowHasContent = true;
            } else if (afterQuote) {
                throw new CsvFormatException("line " + line + ": unexpected '" + ch + "' after a closing quote");
            } else {
                field.append(ch);
            }
        }
        if (quoted) {
            throw new CsvFormatException("line " + rowLine + ": quoted field not closed before the end of the file");
        }
        if (rowHasContent || field.length() > 0 || afterQuote) {
            fields.add(field.toString());
            rows.add(new Row(rowLine, List.copyOf(fields)));
        }
        return rows;
    }

    /** The input is not valid CSV; the message names the line. */
    static final class CsvFormatException extends IOException {
        CsvFormatException(String message) {
            super(message);
        }
    }
}
