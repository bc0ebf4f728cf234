package dev.sluice.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Issue 19: the top costs of sender JVMs from their JDK Flight Recorder files ({@code many-bots --jfr DIR}), over the
 * measured window only: execution samples ({@code jdk.ExecutionSample}) by cost (the deepest frame that matches a
 * {@link #COSTS} entry, leaf first; so a HashMap lookup inside OkHttp counts as OkHttp), by leaf method (self time), by
 * thread group, and the top allocation sites ({@code jdk.ObjectAllocationSample} weight, by the first frame outside
 * {@code java.}/{@code jdk.}). Reads the files with {@link RecordingFile} (streaming; no JSON dump).
 *
 * <p>Run alone: {@code java -jar sluice-bench.jar jfr-summary FILE.jfr... [--from EPOCH_MS --to EPOCH_MS] [--top N]}.
 * Single-threaded; holds nothing between calls.
 */
public final class JfrSummary {
    /** Cost name → frame prefixes ({@code package.Class.method}); the first entry a frame matches wins. */
    static final Map<String, List<String>> COSTS = costs();

    /** Inclusive markers: a sample counts for each marker one of its frames starts with (shares may add up above 100%). */
    static final Map<String, List<String>> MARKERS = markers();

    private JfrSummary() {
    }

    private static Map<String, List<String>> markers() {
        Map<String, List<String>> m = new LinkedHashMap<>();
        m.put("provider call (TelegramTransport.send, all inside)", List.of("dev.sluice.sender.telegram.TelegramTransport.send"));
        m.put("budget decision (BudgetPort/ResilientBudget, all inside)", List.of("dev.sluice.sender.budget.ResilientBudget.",
                "dev.sluice.sender.budget.RedisGcraBudget."));
        m.put("sent marks (all inside)", List.of("dev.sluice.sender.idempotency."));
        m.put("new Redis connection (Lettuce RedisClient.connect)", List.of("io.lettuce.core.RedisClient.connect"));
        m.put("result write (KafkaProducer.send)", List.of("org.apache.kafka.clients.producer.KafkaProducer.send"));
        m.put("outbox poll (KafkaConsumer.poll)", List.of("org.apache.kafka.clients.consumer.KafkaConsumer.poll",
                "org.apache.kafka.clients.consumer.internals.ClassicKafkaConsumer.poll"));
        m.put("Avro decode", List.of("dev.sluice.schemas.SpecificAvroDeserializer.deserialize"));
        m.put("Avro encode", List.of("dev.sluice.schemas.SpecificAvroSerializer.serialize"));
        m.put("logging", List.of("ch.qos.logback.", "org.slf4j."));
        m.put("metrics (Micrometer)", List.of("io.micrometer."));
        return m;
    }

    private static Map<String, List<String>> costs() {
        Map<String, List<String>> m = new LinkedHashMap<>();
        m.put("Avro decode (outbox record)", List.of("dev.sluice.schemas.SpecificAvroDeserializer", "org.apache.avro.io."
                + "BinaryDecoder", "org.apache.avro.specific.SpecificDatumReader", "org.apache.avro.generic.GenericDatumReader"));
        m.put("Avro encode (result record)", List.of("dev.sluice.schemas.SpecificAvroSerializer",
                "org.apache.avro.specific.SpecificDatumWriter", "org.apache.avro.generic.GenericDatumWriter"));
        m.put("provider JSON (pengrad: Gson)", List.of("com.google.gson."));
        m.put("provider HTTP (OkHttp, okio)", List.of("okhttp3.", "okio."));
        m.put("provider request building (pengrad)", List.of("com.pengrad."));
        m.put("Redis client (Lettuce)", List.of("io.lettuce."));
        m.put("Netty (Lettuce I/O)", List.of("io.netty."));
        m.put("Kafka producer (results)", List.of("org.apache.kafka.clients.producer."));
        m.put("Kafka consumer (outbox poll, fetch, commit)", List.of("org.apache.kafka.clients.consumer."));
        m.put("Kafka network client", List.of("org.apache.kafka.clients.", "org.apache.kafka.common.network."));
        m.put("Kafka other", List.of("org.apache.kafka."));
        m.put("logging (logback, slf4j)", List.of("ch.qos.logback.", "org.slf4j."));
        m.put("metrics (Micrometer)", List.of("io.micrometer."));
        m.put("sender: budget", List.of("dev.sluice.sender.budget."));
        m.put("sender: sent marks", List.of("dev.sluice.sender.idempotency."));
        m.put("sender: own code (lanes, dispatch, outcomes)", List.of("dev.sluice.sender."));
        m.put("bare baseline: own code", List.of("dev.sluice.bench.BareSender"));
        return m;
    }

    public static int run(String[] argv) throws IOException {
        List<Path> files = new ArrayList<>();
        List<String> rest = new ArrayList<>();
        for (String a : argv) {
            if (a.endsWith(".jfr")) {
                files.add(Path.of(a));
            } else {
                rest.add(a);
            }
        }
        BenchArgs args = BenchArgs.parse(rest.toArray(String[]::new));
        long from = (long) args.dbl("from", 0);
        long to = (long) args.dbl("to", Long.MAX_VALUE);
        System.out.println(summarise(files, from, to, args.integer("top", 12)));
        return files.isEmpty() ? 2 : 0;
    }

    /** The recordings {@code DIR/<prefix>*.jfr}. */
    public static List<Path> recordings(Path dir, String prefix) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().startsWith(prefix) && p.toString().endsWith(".jfr")).sorted()
                    .toList();
        }
    }

    /** A Markdown summary of {@code files} over {@code [fromMs, toMs)} (epoch ms). */
    public static String summarise(List<Path> files, long fromMs, long toMs, int top) throws IOException {
        Map<String, Long> byCost = new HashMap<>();
        Map<String, Long> bySelf = new HashMap<>();
        Map<String, Long> byThread = new HashMap<>();
        Map<String, Long> sluiceInclusive = new HashMap<>();
        Map<String, Long> allocBySite = new HashMap<>();
        Map<String, Long> byCaller = new HashMap<>();
        Map<String, Long> byMarker = new HashMap<>();
        long samples = 0;
        long allocTotal = 0;
        for (Path f : files) {
            try (RecordingFile r = new RecordingFile(f)) {
                while (r.hasMoreEvents()) {
                    RecordedEvent e = r.readEvent();
                    long t = e.getStartTime().toEpochMilli();
                    if (t < fromMs || t >= toMs) {
                        continue;
                    }
                    String type = e.getEventType().getName();
                    if (type.equals("jdk.ExecutionSample")) {
                        samples++;
                        List<String> frames = frames(e.getStackTrace());
                        bySelf.merge(frames.isEmpty() ? "?" : frames.get(0), 1L, Long::sum);
                        byCaller.merge((frames.isEmpty() ? "?" : frames.get(0)) + " ← " + caller(frames), 1L, Long::sum);
                        byCost.merge(costOf(frames), 1L, Long::sum);
                        String thread = e.getThread("sampledThread") == null ? "?" : e.getThread("sampledThread").getJavaName();
                        byThread.merge(thread == null ? "?" : thread.replaceAll("\\d+", "N"), 1L, Long::sum);
                        for (Map.Entry<String, List<String>> mk : MARKERS.entrySet()) {
                            if (frames.stream().anyMatch(fr -> mk.getValue().stream().anyMatch(fr::startsWith))) {
                                byMarker.merge(mk.getKey(), 1L, Long::sum);
                            }
                        }
                        Set<String> seen = new HashSet<>();
                        for (String fr : frames) {
                            if (fr.startsWith("dev.sluice.") && seen.add(fr)) {
                                sluiceInclusive.merge(fr, 1L, Long::sum);
                            }
                        }
                    } else if (type.equals("jdk.ObjectAllocationSample")) {
                        long w = e.getLong("weight");
                        allocTotal += w;
                        List<String> frames = frames(e.getStackTrace());
                        String site = frames.isEmpty() ? "?" : firstOwn(frames);
                        String cls = e.getClass("objectClass") == null ? "?" : e.getClass("objectClass").getName();
                        allocBySite.merge(site + " (" + cls + ")", w, Long::sum);
                    }
                }
            }
        }
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "JFR %s, window %s .. %s: %d execution samples%n", files.stream()
                .map(p -> p.getFileName().toString()).toList(), fromMs == 0 ? "start" : Instant.ofEpochMilli(fromMs),
                toMs == Long.MAX_VALUE ? "end" : Instant.ofEpochMilli(toMs), samples));
        table(sb, "cost (deepest matching frame)", byCost, samples, top, "samples");
        table(sb, "marker (inclusive: the frame is on the stack)", byMarker, samples, top, "samples");
        table(sb, "hot method (leaf frame, self)", bySelf, samples, top, "samples");
        table(sb, "hot method ← first caller outside the JDK and its library", byCaller, samples, top, "samples");
        table(sb, "dev.sluice method (inclusive: on the stack)", sluiceInclusive, samples, top, "samples");
        table(sb, "thread (digits as N)", byThread, samples, top, "samples");
        table(sb, "allocation site (first non-JDK frame, class)", allocBySite, allocTotal, top, "MB (sampled weight)");
        return sb.toString();
    }

    private static void table(StringBuilder sb, String title, Map<String, Long> counts, long total, int top, String unit) {
        sb.append(String.format(Locale.ROOT, "%n| %s | %s | share |%n|---|---|---|%n", title, unit));
        counts.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(top)
                .forEach(e -> sb.append(String.format(Locale.ROOT, "| %s | %s | %.1f%% |%n", e.getKey(),
                        unit.startsWith("MB") ? String.format(Locale.ROOT, "%.1f", e.getValue() / 1e6) : e.getValue(),
                        total == 0 ? 0.0 : e.getValue() * 100.0 / total)));
    }

    private static List<String> frames(RecordedStackTrace st) {
        if (st == null) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (RecordedFrame f : st.getFrames()) {
            out.add(f.getMethod().getType().getName() + "." + f.getMethod().getName());
        }
        return out;
    }

    /** The first frame (leaf first) outside {@code java.}, {@code jdk.}, {@code sun.}: the library or code that called in. */
    static String firstOwn(List<String> frames) {
        return frames.stream().filter(fr -> !fr.startsWith("java.") && !fr.startsWith("jdk.") && !fr.startsWith("sun."))
                .findFirst().orElse("(JDK only)");
    }

    /** The first frame after the leaf outside the JDK and outside the leaf's own library (its first two name parts). */
    static String caller(List<String> frames) {
        if (frames.isEmpty()) {
            return "?";
        }
        String[] parts = frames.get(0).split("\\.");
        String library = parts.length > 2 ? parts[0] + "." + parts[1] + "." : frames.get(0);
        return frames.stream().skip(1).filter(fr -> !fr.startsWith("java.") && !fr.startsWith("jdk.") && !fr.startsWith("sun.")
                && !fr.startsWith(library)).findFirst().orElse("(none)");
    }

    static String costOf(List<String> frames) {
        for (String fr : frames) {
            for (Map.Entry<String, List<String>> c : COSTS.entrySet()) {
                for (String prefix : c.getValue()) {
                    if (fr.startsWith(prefix)) {
                        return c.getKey();
                    }
                }
            }
        }
        return "other (JDK only)";
    }
}
