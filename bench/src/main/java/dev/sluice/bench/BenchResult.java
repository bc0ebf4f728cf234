package dev.sluice.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a scenario measured: the JSON object a script checks ({@link #json()}, the keys of issue 7) and a
 * table for people ({@link #table}), with the baseline beside each Sluice number where there is one.
 */
public final class BenchResult {
    private final String scenario;
    private final Map<String, Object> json = new LinkedHashMap<>();
    private final List<String> header = new ArrayList<>();
    private final List<List<String>> rows = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    public BenchResult(String scenario, String... header) {
        this.scenario = scenario;
        this.header.addAll(List.of(header));
    }

    public Map<String, Object> json() {
        return json;
    }

    public BenchResult put(String key, Object value) {
        json.put(key, value);
        return this;
    }

    public BenchResult row(Object... cells) {
        List<String> r = new ArrayList<>();
        for (Object c : cells) {
            r.add(format(c));
        }
        rows.add(r);
        return this;
    }

    public BenchResult note(String format, Object... args) {
        notes.add(String.format(Locale.ROOT, format, args));
        return this;
    }

    static String format(Object c) {
        if (c instanceof Double d) {
            return Math.abs(d) >= 100 ? String.format(Locale.ROOT, "%.1f", d) : String.format(Locale.ROOT, "%.3f", d);
        }
        return String.valueOf(c);
    }

    /** A Markdown table (readable in a terminal, pasteable into BENCHMARKS.md). */
    public String table() {
        StringBuilder sb = new StringBuilder();
        sb.append("## ").append(scenario).append('\n');
        sb.append("| ").append(String.join(" | ", header)).append(" |\n");
        sb.append("|").append("---|".repeat(header.size())).append('\n');
        for (List<String> r : rows) {
            sb.append("| ").append(String.join(" | ", r)).append(" |\n");
        }
        for (String n : notes) {
            sb.append("- ").append(n).append('\n');
        }
        return sb.toString();
    }

    /** Prints the table and writes the JSON when a path is given. */
    public void emit(BenchArgs args) throws IOException {
        System.out.println();
        System.out.print(table());
        String text = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(json);
        System.out.println(text);
        if (args.json().isPresent()) {
            Path p = args.json().get().toAbsolutePath();
            if (p.getParent() != null) {
                Files.createDirectories(p.getParent());
            }
            Files.writeString(p, text + "\n");
        }
    }
}
