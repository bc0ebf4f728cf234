package dev.sluice.app.tools;

import dev.sluice.app.ConfigOptions;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.Notification;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.Deserializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code sluice results}: what happened to notifications. Reads {@code delivery.results} (and with {@code --dlq} the
 * dead-letter topic) from the beginning, or from {@code --since}, up to the end offsets at start ({@code --follow}:
 * then keeps reading new ones), and prints one line per result, or one JSON object per line with {@code --json}:
 * id, status, chat, class, lag, reason. Ends with a count by status. Reads committed records only (the topology
 * writes with exactly-once) and joins no consumer group, so it never disturbs the pipeline. Runs on the caller's
 * thread; in follow mode a shutdown hook (Ctrl-C, SIGTERM) ends the loop and waits for the summary.
 */
@Command(name = "results", mixinStandardHelpOptions = true,
        description = {"Print delivery results (and with --dlq dead letters), one line each: id, status, chat, class, lag, reason; then a count by status.",
                "E.g. sluice results --id n-42, sluice results --since 10m --status FAILED,EXPIRED, sluice results --follow --json"})
public final class ResultsCommand implements Callable<Integer> {
    /** Exit code when {@code --id} was given and some id has no result (yet). */
    public static final int EXIT_ID_WITHOUT_RESULT = 1;

    @Option(names = "--dlq", description = "Also read the dead-letter topic (topic.notifications.dlq); its records show as DEAD_LETTER with the reason.")
    boolean dlq;

    @Option(names = "--json", description = "One JSON object per line on stdout (the summary goes to stderr).")
    boolean json;

    @Option(names = "--follow", description = "Keep printing new results until Ctrl-C (or --follow-seconds).")
    boolean follow;

    @Option(names = "--follow-seconds", paramLabel = "SECONDS", description = "With --follow: stop after this long (default: until Ctrl-C).")
    Long followSeconds;

    @Option(names = "--id", split = ",", paramLabel = "ID", description = "Only results of these notification ids (a digest's result matches the ids it folded). Exit code 1 when one has no result.")
    List<String> ids;

    @Option(names = "--since", paramLabel = "TIME", description = "Only records written at or after this instant (2025-07-30T00:00:00Z) or this long ago (90s, 10m, 2h, 1d).")
    String since;

    @Option(names = "--status", split = ",", paramLabel = "STATUS", description = "Only these statuses: DELIVERED, BLOCKED, SKIPPED_INACTIVE, FAILED, UNCERTAIN, EXPIRED, DEAD_LETTER.")
    List<String> statuses;

    @Mixin
    ConfigOptions config;

    @Mixin
    Verbosity verbosity;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return ToolErrors.run("results", spec.commandLine().getErr(), verbosity.verbose(), this::results);
    }

    private int results() throws InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Instant from;
        try {
            from = since == null ? null : parseSince(since, Instant.now());
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        Set<String> wantedStatus = checkStatuses();
        if (followSeconds != null && (!follow || followSeconds <= 0)) {
            throw new ParameterException(spec.commandLine(), "--follow-seconds " + followSeconds + ": needs --follow and a positive number");
        }
        Settings s = config.load();
        Topics topics = Topics.from(s);
        List<String> read = dlq ? List.of(topics.deliveryResults(), topics.dlq()) : List.of(topics.deliveryResults());
        Map<String, Object> props = KafkaClients.reader(s, "sluice-results");
        Reachability.registry(s, Reachability.REGISTRY_TIMEOUT);
        Reachability.kafka(props, read, Reachability.TIMEOUT);

        CachedSchemaRegistryClient registry = CachedSchemaRegistryClient.fromSettings(s);
        Deserializer<DeliveryResult> results = new SpecificAvroSerde<>(registry, DeliveryResult.class).deserializer();
        Deserializer<Notification> notifications = new SpecificAvroSerde<>(registry, Notification.class).deserializer();
        Map<String, Long> byStatus = new TreeMap<>();
        Set<String> seenIds = new LinkedHashSet<>();
        Map<String, Set<String>> otherStatuses = new TreeMap<>(); // --id with --status: statuses an id has besides
        DecodeTally decodes = new DecodeTally();

        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch finished = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            stop.set(true);
            try {
                finished.await(5, TimeUnit.SECONDS); // the summary is printed within a poll (500 ms)
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "sluice-results-stop");
        if (follow) {
            Runtime.getRuntime().addShutdownHook(hook);
        }
        try {
            Instant followUntil = followSeconds == null ? null : Instant.now().plusSeconds(followSeconds);
            RecordReader.read(props, read, from, follow, () -> stop.get() || (followUntil != null && Instant.now().isAfter(followUntil)), () -> {
                err.println("results: following " + String.join(" and ", read) + " (Ctrl-C to stop)");
                err.flush();
            }, r -> {
                ResultLine line;
                if (r.topic().equals(topics.deliveryResults())) {
                    DeliveryResult result = decodes.decode(results, r);
                    if (result == null) {
                        return;
                    }
                    line = ResultLine.of(result, r);
                } else {
                    line = ResultLine.deadLetter(r, decode(notifications, r));
                }
                List<String> hit = ids == null ? null : ids.stream().filter(line::concerns).toList();
                if (hit != null && hit.isEmpty()) {
                    return;
                }
                if (wantedStatus != null && !wantedStatus.contains(line.status())) {
                    if (hit != null) { // said in the summary: the id has a result, of another status
                        hit.forEach(id -> otherStatuses.computeIfAbsent(id, k -> new TreeSet<>()).add(line.status()));
                    }
                    return;
                }
                if (hit != null) {
                    seenIds.addAll(hit);
                }
                byStatus.merge(line.status(), 1L, Long::sum);
                out.println(json ? line.toJson() : line.toText());
                out.flush();
            });
        } finally {
            PrintWriter summaryTo = json ? err : out;
            if (decodes.noneDecoded()) {
                finished.countDown(); // the error below is the one line: not "0 shown"
                removeHook(hook, stop);
                throw decodes.noneDecodedError(s.string("schema.registry.url", "(schema.registry.url not set)"));
            }
            long total = byStatus.values().stream().mapToLong(Long::longValue).sum();
            summaryTo.println("results: " + total + " shown" + (total == 0 ? "" : " ("
                    + byStatus.entrySet().stream().map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", ")) + ")")
                    + " from " + String.join(" and ", read) + (decodes.undecodable() > 0 ? "; " + decodes.undecodable() + " undecodable records skipped" : ""));
            if (ids != null) {
                List<String> missing = ids.stream().filter(id -> !seenIds.contains(id)).toList();
                List<String> none = missing.stream().filter(id -> !otherStatuses.containsKey(id)).toList();
                for (String id : missing) {
                    if (otherStatuses.containsKey(id)) {
                        summaryTo.println("results: no " + String.join(" or ", wantedStatus) + " result for " + id
                                + (from == null ? "" : " written since " + from)
                                + " (it has: " + String.join(", ", otherStatuses.get(id)) + ")");
                    }
                }
                if (!none.isEmpty()) {
                    // with --since an older result was not read: say so, it may well exist
                    summaryTo.println("results: no result (yet) for " + String.join(", ", none)
                            + (from == null ? "" : " written since " + from + " (older ones not read: drop --since)")
                            + (dlq ? "" : " (dead letters too: --dlq)"));
                }
            }
            summaryTo.flush();
            finished.countDown();
            removeHook(hook, stop);
        }
        return ids != null && !seenIds.containsAll(ids) ? EXIT_ID_WITHOUT_RESULT : 0;
    }

    private void removeHook(Thread hook, AtomicBoolean stop) {
        if (follow && !stop.get()) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the JVM is already stopping; the hook waits for the latch counted down before
            }
        }
    }

    private Set<String> checkStatuses() {
        if (statuses == null) {
            return null;
        }
        Set<String> known = Arrays.stream(DeliveryStatus.values()).map(Enum::name).collect(Collectors.toCollection(LinkedHashSet::new));
        known.add(ResultLine.DEAD_LETTER);
        Set<String> wanted = new LinkedHashSet<>();
        for (String st : statuses) {
            String up = st.trim().toUpperCase(Locale.ROOT);
            if (!known.contains(up)) {
                throw new ParameterException(spec.commandLine(), "--status " + st + ": not one of " + String.join(", ", known));
            }
            wanted.add(up);
        }
        if (wanted.contains(ResultLine.DEAD_LETTER) && !dlq) {
            throw new ParameterException(spec.commandLine(), "--status DEAD_LETTER: add --dlq to read the dead-letter topic");
        }
        return wanted;
    }

    /**
     * An ISO-8601 instant, or an amount ago: {@code 90s}, {@code 10m}, {@code 2h}, {@code 1d}, {@code PT10M}. A time
     * before 1970 (an instant, or an amount reaching back that far, however large) is the beginning of the topic:
     * {@link Instant#EPOCH}, as Kafka cannot look up a negative timestamp.
     */
    static Instant parseSince(String text, Instant now) {
        String t = text.trim();
        try {
            return atLeastEpoch(Instant.parse(t));
        } catch (DateTimeParseException notAnInstant) {
            // try a duration below
        }
        try {
            if (t.toUpperCase(Locale.ROOT).startsWith("P")) {
                return ago(now, Duration.parse(t));
            }
            if (t.length() >= 2) {
                long n = Long.parseLong(t.substring(0, t.length() - 1));
                char unit = Character.toLowerCase(t.charAt(t.length() - 1));
                long secondsPerUnit = switch (unit) {
                    case 's' -> 1;
                    case 'm' -> 60;
                    case 'h' -> 3600;
                    case 'd' -> 86_400;
                    default -> -1;
                };
                if (secondsPerUnit > 0 && n >= 0) {
                    if (n > now.getEpochSecond() / secondsPerUnit) {
                        return Instant.EPOCH; // reaches back before 1970 (or past what a Duration holds)
                    }
                    return ago(now, Duration.ofSeconds(n * secondsPerUnit));
                }
            }
        } catch (NumberFormatException | DateTimeParseException e) {
            // reported below
        }
        throw new IllegalArgumentException("--since '" + text + "': expected an ISO-8601 instant (2025-07-30T00:00:00Z) or an amount ago (90s, 10m, 2h, 1d)");
    }

    private static Instant ago(Instant now, Duration d) {
        if (d.isNegative()) {
            throw new DateTimeParseException("negative", d.toString(), 0);
        }
        return d.getSeconds() >= now.getEpochSecond() ? Instant.EPOCH : atLeastEpoch(now.minus(d));
    }

    private static Instant atLeastEpoch(Instant t) {
        return t.isBefore(Instant.EPOCH) ? Instant.EPOCH : t;
    }

    private static <T> T decode(Deserializer<T> d, ConsumerRecord<byte[], byte[]> r) {
        try {
            return r.value() == null ? null : d.deserialize(r.topic(), r.headers(), r.value());
        } catch (RuntimeException e) {
            return null;
        }
    }
}
