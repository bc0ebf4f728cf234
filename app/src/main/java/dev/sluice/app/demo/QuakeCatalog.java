package dev.sluice.app.demo;

import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvSchema;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Reads USGS ComCat CSV extracts (columns start with {@code time_utc_iso,magnitude,place,id}; see
 * {@code data/usgs/README.md} for provenance). Rows are returned in time order.
 */
public final class QuakeCatalog {
    /** The demo's default input, bundled in the jar: the 196 M≥5 events around the M8.8 Kamchatka shock. */
    public static final String KAMCHATKA_RESOURCE = "/demo/kamchatka_2025-07-29T23_to_2025-07-31_m5.csv";

    private QuakeCatalog() {
    }

    public static List<Quake> kamchatka() {
        try (InputStream in = QuakeCatalog.class.getResourceAsStream(KAMCHATKA_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("demo input " + KAMCHATKA_RESOURCE + " is missing from the classpath");
            }
            return read(new java.io.InputStreamReader(in, StandardCharsets.UTF_8), KAMCHATKA_RESOURCE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static List<Quake> read(Path file) {
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            return read(r, file.toString());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    static List<Quake> read(Reader reader, String source) throws IOException {
        CsvMapper mapper = new CsvMapper();
        CsvSchema schema = CsvSchema.emptySchema().withHeader();
        List<Quake> out = new ArrayList<>();
        try (MappingIterator<Map<String, String>> it = mapper.readerForMapOf(String.class).with(schema).readValues(reader)) {
            int line = 1;
            while (it.hasNext()) {
                line++;
                Map<String, String> row = it.next();
                out.add(parse(row, source, line));
            }
        }
        out.sort(Comparator.comparing(Quake::time));
        return List.copyOf(out);
    }

    private static Quake parse(Map<String, String> row, String source, int line) {
        String time = field(row, "time_utc_iso", source, line);
        String mag = field(row, "magnitude", source, line);
        Instant t;
        double m;
        try {
            t = Instant.parse(time);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(source + " line " + line + ": field time_utc_iso '" + time + "' is not an ISO-8601 instant");
        }
        try {
            m = Double.parseDouble(mag);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(source + " line " + line + ": field magnitude '" + mag + "' is not a number");
        }
        return new Quake(t, m, field(row, "place", source, line), field(row, "id", source, line));
    }

    private static String field(Map<String, String> row, String name, String source, int line) {
        String v = row.get(name);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException(source + " line " + line + ": field " + name + " is missing");
        }
        return v.trim();
    }
}
