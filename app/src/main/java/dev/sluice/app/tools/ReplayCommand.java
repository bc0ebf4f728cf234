package dev.sluice.app.tools;

import dev.sluice.app.ConfigOptions;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.Notification;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.topology.DeadLetterHeaders;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.apache.avro.Schema;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code sluice replay}: republishes work for backfill, so it goes through the topology again on the
 * backfill lane (budget only above the live headroom).
 *
 * <ul>
 *   <li>{@code --from delivery.results}: results do not carry the message text, so replay first selects the
 *   results that match {@code --filter} (and {@code --since}/{@code --until}, by record timestamp), collects
 *   their notification ids ({@code folded_ids} for a digest, else {@code message_id}), then reads the
 *   original notifications from {@code --originals} (default: the notifications and notifications.backfill
 *   topics) and writes those it finds, unchanged except for the attribute {@code sluice.replayed.from}
 *   ({@code delivery.results:<status>}), in the order they were first written. The id stays the same: it is
 *   the idempotency key, and the earlier result was terminal without a delivery. A notification no longer in
 *   its topic (retention) is reported by id; the exit code is then 1.</li>
 *   <li>{@code --from notifications.dlq}: the dead-letter topic keeps the original key, value bytes and
 *   headers, so replay republishes them as they are, minus the {@code sluice.dlq.*} headers, plus
 *   {@code sluice.replay.source = <topic>:<partition>:<offset>}. Filters name a dead-letter header
 *   ({@code reason}, {@code error.class}, {@code source.topic}, with or without the {@code sluice.dlq.} prefix).</li>
 * </ul>
 * A filter value may list alternatives: {@code --filter status=FAILED,EXPIRED}. Matching is exact; a result field
 * that is an enum ({@code status}, {@code lane}, {@code event_class}) takes only its symbols: any other value is refused
 * as a usage error naming the option, the value and the allowed ones ({@link ReplayArgs}).
 */
@Command(name = "replay", mixinStandardHelpOptions = true,
        description = {"Republish delivery results (as their original notifications) or dead letters for backfill.",
                "E.g. sluice replay --from delivery.results --to notifications.backfill --since 2h --filter status=FAILED"})
public final class ReplayCommand implements Callable<Integer> {
    /** Attribute added to a notification re-created from a delivery result. */
    public static final String REPLAYED_FROM_ATTRIBUTE = "sluice.replayed.from";
    /** Attribute added with it: when the replay was made, epoch ms (the sender's rule for earlier attempts' marks). */
    public static final String REPLAYED_AT_ATTRIBUTE = "sluice.replayed.at";
    /** Header added to a republished dead letter: where it was read from. */
    public static final String REPLAY_SOURCE_HEADER = "sluice.replay.source";

    @Option(names = "--from", required = true, paramLabel = "TOPIC", description = "The delivery results topic or the dead-letter topic (as configured: topic.delivery.results / topic.notifications.dlq).")
    String from;

    @Option(names = "--to", paramLabel = "TOPIC", description = "Target topic (default: topic.notifications.backfill).")
    String to;

    @Option(names = "--since", paramLabel = "TIME", description = "Only records with a timestamp at or after this instant (2025-07-30T00:00:00Z) or this long ago (90s, 10m, 2h, 1d, PT30M).")
    String sinceText;

    /** {@link #sinceText} read once, at start ({@link ResultsCommand#parseSince}: the forms {@code sluice results} takes). */
    private Instant since;

    @Option(names = "--until", paramLabel = "ISO-8601", description = "Only records with a timestamp before this instant.")
    Instant until;

    @Option(names = "--filter", paramLabel = "FIELD=VALUE[,VALUE]", description = "Results: a DeliveryResult field (status, bot_id, chat_id, event_class, lane, error_code, ...). Dead letters: a header (reason, error.class, source.topic). Repeatable; all must match.")
    Map<String, String> filters = new LinkedHashMap<>();

    @Option(names = "--originals", split = ",", paramLabel = "TOPIC", description = "Where to find the notifications of matching results (default: topic.notifications and topic.notifications.backfill).")
    List<String> originals;

    @Option(names = "--dry-run", description = "Select and report, write nothing.")
    boolean dryRun;

    @Option(names = "--progress", defaultValue = "AUTO", description = "AUTO (a bar on a terminal, plain lines otherwise), BAR, PLAIN or NONE.")
    Progress.Mode progress;

    @Mixin
    ConfigOptions config;

    @Mixin
    Verbosity verbosity;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return ToolErrors.run("replay", spec.commandLine().getErr(), verbosity.verbose(), this::replay);
    }

    private int replay() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            since = sinceText == null ? null : ResultsCommand.parseSince(sinceText, Instant.now());
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        Settings s = config.load();
        Topics topics = Topics.from(s);
        String target = to != null ? to : topics.notificationsBackfill();
        if (since != null && until != null && !since.isBefore(until)) {
            throw new ParameterException(spec.commandLine(), "--since " + since + " must be before --until " + until);
        }
        if (target.equals(from)) {
            throw new ParameterException(spec.commandLine(), "--to " + target + " is the --from topic");
        }
        boolean fromResults = from.equals(topics.deliveryResults());
        Map<String, Set<String>> wanted = parseFilters(fromResults ? DeliveryResult.getClassSchema() : null,
                from.equals(topics.dlq())); // before any I/O
        if (fromResults || from.equals(topics.dlq())) {
            List<String> needed = new ArrayList<>(List.of(from));
            if (!dryRun) {
                needed.add(target);
            }
            if (fromResults) {
                Reachability.registry(s, Reachability.REGISTRY_TIMEOUT);
                needed.addAll(originals != null ? originals : List.of(topics.notifications(), topics.notificationsBackfill()));
            }
            Reachability.kafka(KafkaClients.reader(s, "sluice-replay"), needed, Reachability.TIMEOUT);
        }
        int rc;
        if (fromResults) {
            rc = replayResults(s, topics, target, wanted, out, err);
        } else if (from.equals(topics.dlq())) {
            rc = replayDeadLetters(s, target, wanted, out, err);
        } else {
            throw new ParameterException(spec.commandLine(), "--from '" + from + "': expected the delivery results topic ("
                    + topics.deliveryResults() + ") or the dead-letter topic (" + topics.dlq() + ")");
        }
        out.flush();
        err.flush();
        return rc;
    }

    private int replayResults(Settings s, Topics topics, String target, Map<String, Set<String>> wanted, PrintWriter out,
                              PrintWriter err) {
        CachedSchemaRegistryClient registry = CachedSchemaRegistryClient.fromSettings(s);
        Deserializer<DeliveryResult> results = new SpecificAvroSerde<>(registry, DeliveryResult.class).deserializer();
        Deserializer<Notification> notifications = new SpecificAvroSerde<>(registry, Notification.class).deserializer();

        // 1. The matching results: which notification ids to re-create, and the status each ended with.
        Map<String, String> statusById = new LinkedHashMap<>();
        AtomicLong matched = new AtomicLong();
        DecodeTally decodes = new DecodeTally();
        try (Progress p = Progress.open(progress, "replay: reading " + from, 0, err)) {
            TopicScan.scan(KafkaClients.reader(s, "sluice-replay"), from, since, until, p, r -> {
                DeliveryResult result = decodes.decode(results, r);
                if (result == null || !matches(wanted, name -> result.get(name))) {
                    return;
                }
                matched.incrementAndGet();
                List<String> ids = result.getFoldedIds().isEmpty() ? List.of(result.getMessageId()) : result.getFoldedIds();
                ids.forEach(id -> statusById.put(id, result.getStatus().name()));
                p.message(matched.get() + " matching");
            });
        }

        // 2. Their notifications, from the original topics, in the order they were written there.
        List<String> sourceTopics = originals != null ? originals : List.of(topics.notifications(), topics.notificationsBackfill());
        Map<String, Notification> found = new LinkedHashMap<>();
        if (!statusById.isEmpty()) {
            for (String topic : sourceTopics) {
                try (Progress p = Progress.open(progress, "replay: finding notifications in " + topic, 0, err)) {
                    TopicScan.scan(KafkaClients.reader(s, "sluice-replay"), topic, null, null, p, r -> {
                        Notification n = decodes.decode(notifications, r);
                        if (n != null && statusById.containsKey(n.getId()) && !found.containsKey(n.getId())) {
                            found.put(n.getId(), n);
                            p.message(found.size() + "/" + statusById.size() + " found");
                        }
                    });
                }
            }
        }
        if (decodes.noneDecoded()) {
            throw decodes.noneDecodedError(s.string("schema.registry.url", "(schema.registry.url not set)"));
        }
        List<String> missing = statusById.keySet().stream().filter(id -> !found.containsKey(id)).toList();

        // 3. Republish.
        long written = 0;
        if (!dryRun && !found.isEmpty()) {
            List<ProducerRecord<String, Notification>> records = new ArrayList<>();
            String replayedAt = Long.toString(System.currentTimeMillis());
            for (Notification n : found.values()) {
                Notification copy = Notification.newBuilder(n).build();
                Map<String, String> attributes = new LinkedHashMap<>(copy.getAttributes());
                attributes.put(REPLAYED_FROM_ATTRIBUTE, from + ":" + statusById.get(n.getId()));
                // the sender takes marks older than this for an earlier attempt's (a replay is a new attempt)
                attributes.put(REPLAYED_AT_ATTRIBUTE, replayedAt);
                copy.setAttributes(attributes);
                records.add(new ProducerRecord<>(target, copy.getChatId(), copy));
            }
            written = send(s, target, new StringSerializer(), new SpecificAvroSerde<>(registry, Notification.class).serializer(), records, err);
        }
        out.printf("replay: %d results matched %s in %s; %d notifications found in %s; %d %s %s%s%n",
                matched.get(), describeFilters(), from, found.size(), sourceTopics, dryRun ? found.size() : written,
                dryRun ? "would be written to" : "written to", target, decodes.undecodable() > 0 ? "; " + decodes.undecodable() + " undecodable records skipped" : "");
        if (!missing.isEmpty()) {
            out.printf("replay: %d notifications not found (past retention?): %s%s%n", missing.size(),
                    missing.stream().limit(20).collect(Collectors.joining(", ")), missing.size() > 20 ? ", ..." : "");
            return 1;
        }
        return written < 0 ? 2 : 0;
    }

    private int replayDeadLetters(Settings s, String target, Map<String, Set<String>> filtersGiven, PrintWriter out,
                                  PrintWriter err) {
        Map<String, Set<String>> wanted = new LinkedHashMap<>();
        filtersGiven.forEach((k, v) -> wanted.put(k.startsWith(DeadLetterHeaders.PREFIX) ? k : DeadLetterHeaders.PREFIX + k, v));
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        try (Progress p = Progress.open(progress, "replay: reading " + from, 0, err)) {
            TopicScan.scan(KafkaClients.reader(s, "sluice-replay"), from, since, until, p, r -> {
                if (!matches(wanted, name -> header(r, name))) {
                    return;
                }
                RecordHeaders headers = new RecordHeaders();
                for (Header h : r.headers()) {
                    if (!h.key().startsWith(DeadLetterHeaders.PREFIX)) {
                        headers.add(h);
                    }
                }
                headers.add(REPLAY_SOURCE_HEADER, (r.topic() + ":" + r.partition() + ":" + r.offset()).getBytes(StandardCharsets.UTF_8));
                records.add(new ProducerRecord<>(target, null, r.key(), r.value(), headers));
                p.message(records.size() + " matching");
            });
        }
        long written = dryRun ? 0 : send(s, target, new ByteArraySerializer(), new ByteArraySerializer(), records, err);
        out.printf("replay: %d dead letters matched %s in %s; %d %s %s%n", records.size(), describeFilters(), from,
                dryRun ? records.size() : written, dryRun ? "would be written to" : "written to", target);
        return written < 0 ? 2 : 0;
    }

    /** Sends in order and waits; returns the count written, or -1 after reporting a send failure. */
    private <K, V> long send(Settings s, String target, Serializer<K> keys, Serializer<V> values,
                             List<ProducerRecord<K, V>> records, PrintWriter err) {
        AtomicLong written = new AtomicLong();
        AtomicLong handed = new AtomicLong();
        AtomicReference<Exception> failure = new AtomicReference<>();
        ProducerAnswers answers = new ProducerAnswers();
        Map<String, Object> props = KafkaClients.producer(s, "sluice-replay");
        Duration bound = ProducerAnswers.confirmBound(props);
        boolean confirmed;
        try (KafkaProducer<K, V> producer = new KafkaProducer<>(props, keys, values);
             Progress p = Progress.open(progress, "replay: writing " + target, records.size(), err)) {
            for (ProducerRecord<K, V> r : records) {
                if (failure.get() != null) {
                    break;
                }
                handed.incrementAndGet();
                producer.send(r, (md, e) -> {
                    try {
                        if (e != null) {
                            failure.compareAndSet(null, e);
                        } else {
                            written.incrementAndGet();
                            p.step(1);
                        }
                    } finally {
                        answers.answered(); // last: the wait for it sees its counts and its progress step
                    }
                });
            }
            confirmed = answers.await(handed::get, bound);
            if (!confirmed) {
                producer.close(Duration.ZERO); // the rest: not confirmed (may or may not be written)
            }
        } catch (java.io.InterruptedIOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        if (!confirmed) {
            err.println("replay: Kafka did not confirm writes to " + target + " within " + bound.toSeconds() + " s: "
                    + written.get() + " of " + records.size() + " records written, "
                    + (handed.get() - written.get()) + " not confirmed (may or may not be written)");
            return -1;
        }
        if (failure.get() != null) {
            err.println("replay: writing to " + target + " failed after " + written.get() + " of " + records.size()
                    + " records: " + dev.sluice.app.logging.RedactingCliErrors.describe(failure.get()));
            return -1;
        }
        return written.get();
    }

    /**
     * FIELD=V1,V2 → field → {V1, V2}; with {@code schema} (results) checks field names and enum values
     * ({@link ReplayArgs#filters}): a value no record can have is a usage error, not a filter that matches nothing.
     */
    private Map<String, Set<String>> parseFilters(Schema schema, boolean deadLetters) {
        try {
            return deadLetters ? ReplayArgs.deadLetterFilters(filters) : ReplayArgs.filters(filters, schema);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    private static boolean matches(Map<String, Set<String>> wanted, java.util.function.Function<String, Object> value) {
        for (Map.Entry<String, Set<String>> e : wanted.entrySet()) {
            Object v = value.apply(e.getKey());
            if (v == null || !e.getValue().contains(v.toString())) {
                return false;
            }
        }
        return true;
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    private String describeFilters() {
        List<String> parts = new ArrayList<>();
        filters.forEach((k, v) -> parts.add(k + "=" + v));
        if (since != null) {
            parts.add("since " + since);
        }
        if (until != null) {
            parts.add("until " + until);
        }
        return parts.isEmpty() ? "(no filter)" : "(" + String.join(", ", parts) + ")";
    }

}
