package dev.sluice.app.plan;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.List;

/**
 * Event instants read from a CSV file with a header row, e.g. a USGS ComCat export whose first
 * column is {@code time_utc_iso} (ISO-8601 instants such as {@code 2025-07-29T23:24:52.483Z}).
 * Instants are sorted ascending (USGS exports are often newest first).
 *
 * @param source         where the events came from (the file name)
 * @param instantsMillis event instants, epoch ms, ascending
 */
record EventHistory(String source, long[] instantsMillis) {

    /** The default time column of the USGS files. */
    static final String DEFAULT_TIME_COLUMN = "time_utc_iso";

    EventHistory {
        instantsMillis = instantsMillis.clone();
        Arrays.sort(instantsMillis);
    }

    @Override
    public long[] instantsMillis() {
        return instantsMillis.clone();
    }

    int size() {
        return instantsMillis.length;
    }

    /**
     * Reads the file. The time column is {@code timeColumn} if the header has it, else the first
     * column.
     *
     * @throws PlanInputException naming the file, line, field and value of a bad row
     */
    static EventHistory read(Path file, String timeColumn) throws PlanInputException {
        List<CsvRecords.Row> rows;
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            rows = CsvRecords.read(in);
        } catch (CsvRecords.CsvFormatException e) {
            throw new PlanInputException(file + ": " + e.getMessage());
        } catch (IOException e) {
            throw new PlanInputException(file + ": cannot read: " + e);
        }
        if (rows.isEmpty()) {
            throw new PlanInputException(file + ": empty file; expected a header row such as 'time_utc_iso,...'");
        }
        List<String> header = rows.get(0).fields();
        int column = header.indexOf(timeColumn);
        if (column < 0) {
            column = 0;
        }
        String columnName = header.get(column).isBlank() ? "column " + (column + 1) : header.get(column);
        long[] instants = new long[rows.size() - 1];
        for (int i = 1; i < rows.size(); i++) {
            CsvRecords.Row row = rows.get(i);
            if (row.fields().size() <= column) {
                throw new PlanInputException(file + ": line " + row.line() + ": field " + columnName
                        + " missing (row has " + row.fields().size() + " fields)");
            }
            String value = row.fields().get(column).trim();
            try {
                instants[i - 1] = Instant.parse(value).toEpochMilli();
            } catch (DateTimeParseException e) {
                throw new PlanInputException(file + ": line " + row.line() + ": field " + columnName
                        + ": bad instant '" + value + "'; expected ISO-8601 like 2025-07-29T23:24:52.483Z");
            }
        }
        return new EventHistory(file.getFileName().toString(), instants);
    }
}
