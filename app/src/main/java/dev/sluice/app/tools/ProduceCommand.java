package dev.sluice.app.tools;

import dev.sluice.app.ConfigOptions;
import dev.sluice.avro.Notification;
import dev.sluice.config.Settings;
import dev.sluice.config.Topics;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.schemas.SpecificAvroSerde;
import dev.sluice.topology.TopologyConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.StringSerializer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code sluice produce --file events.jsonl}: writes Notification records from JSON lines (one object per line,
 * fields as in {@code Notification.avsc}, see {@link NotificationJson}), keyed by chat id, Avro in the Confluent
 * wire format. Bad lines are reported (line, field, value) and skipped, or stop the run with
 * {@code --fail-fast} before anything is sent; a line over {@link BoundedLines#MAX_LINE_BYTES} is a bad line naming that
 * bound, never read whole, and so is a line that is not UTF-8. The loop and the summary are {@link ProduceRun}'s.
 * Exit code 0 when every line was written, 1 when some were skipped, 2 on a failure to write, 130 after Ctrl-C (143
 * after SIGTERM; the summary is printed all the same, from the first check of the registry and Kafka on).
 */
@Command(name = "produce", mixinStandardHelpOptions = true,
        description = {"Write notifications from a JSON-lines file (fields as in Notification.avsc; times ISO-8601 or epoch ms), keyed by chat id.",
                "Each bad line is reported with its line number, field and value, and skipped (or --fail-fast)."})
public final class ProduceCommand implements Callable<Integer> {
    @Option(names = "--file", required = true, paramLabel = "FILE", description = "JSON lines, one notification object per line ('-' = stdin). Blank lines and lines starting with // are ignored.")
    Path file;

    @Option(names = "--topic", paramLabel = "TOPIC", description = "Target topic (default: topic.notifications, i.e. notifications).")
    String topic;

    @Option(names = "--fail-fast", description = "Stop at the first bad line; validates the whole file before sending anything.")
    boolean failFast;

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
        return ToolErrors.run("produce", spec.commandLine().getErr(), verbosity.verbose(), this::produce);
    }

    private int produce() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (!isStdin() && Files.isDirectory(file)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--file " + file
                    + ": is a directory; expected a file of JSON lines (or - for stdin)");
        }
        if (!isStdin() && !Files.isReadable(file)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--file " + file + ": no such readable file");
        }
        Settings s = config.load();
        String target = topic != null ? topic : Topics.from(s).notifications();
        NotificationJson parser = new NotificationJson(Clock.systemUTC(), TopologyConfig.scheduleMaxHorizonMs(s));

        long lines = countLines();
        ProduceRun run = new ProduceRun(parser, target, isStdin() ? -1 : lines, out, err);
        // Ctrl-C or SIGTERM from here on, the checks of the registry and Kafka (seconds) included: stop reading, give what
        // was handed over a bounded time, print the summary (exit 130, 143 after SIGTERM)
        Thread hook = new Thread(() -> {
            try {
                run.stopFromHook();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "sluice-produce-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            return validateAndSend(s, target, parser, lines, run, err);
        } finally {
            if (!run.stopped()) {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // the JVM is stopping: the hook runs and finds the summary printed, or prints it
                }
            }
        }
    }

    private int validateAndSend(Settings s, String target, NotificationJson parser, long lines, ProduceRun run, PrintWriter err)
            throws Exception {
        if (failFast) {
            // Validate everything first: a half-written file is worse than none.
            try (BoundedLines in = open()) {
                for (BoundedLines.Line line = in.next(); line != null && !run.stopped(); line = in.next()) {
                    if (line.unreadable() || !ProduceRun.skip(line.text())) {
                        try {
                            ProduceRun.parse(parser, line);
                        } catch (InvalidLineException e) {
                            err.println("produce: " + dev.sluice.chat.Identifiers.escapeInvisible(e.getMessage()));
                            err.println("produce: --fail-fast: nothing was written to " + target);
                            return 1;
                        }
                    }
                }
            }
            if (run.stopped()) {
                return run.summary(); // Ctrl-C while checking the file: nothing was sent
            }
        }

        Map<String, Object> producerProps = KafkaClients.producer(s, "sluice-produce");
        run.confirmBound(ProducerAnswers.confirmBound(producerProps));
        Reachability.registry(s, Reachability.REGISTRY_TIMEOUT);
        Reachability.kafka(producerProps, List.of(target), Reachability.TIMEOUT);
        CachedSchemaRegistryClient registry = CachedSchemaRegistryClient.fromSettings(s);
        try (KafkaProducer<String, Notification> producer = new KafkaProducer<>(producerProps,
                new StringSerializer(), new SpecificAvroSerde<>(registry, Notification.class).serializer());
             Progress bar = Progress.open(progress, "produce", lines, err);
             BoundedLines in = open()) {
            run.send(in, producer, bar);
        }
        return run.summary();
    }

    private long countLines() throws IOException {
        if (isStdin()) {
            return 0;
        }
        long n = 0;
        try (BoundedLines in = new BoundedLines(Files.newInputStream(file), 0)) {
            while (in.next() != null) {
                n++; // counted without holding any line
            }
        }
        return n;
    }

    private boolean isStdin() {
        return "-".equals(file.toString());
    }

    /**
     * The input's lines, each at most {@link BoundedLines#MAX_LINE_BYTES} and decoded strictly as UTF-8 (file and stdin
     * alike): a longer line, or one that is not UTF-8, is reported and skipped, never held or sent with U+FFFD in it.
     */
    private BoundedLines open() throws IOException {
        if (isStdin()) {
            if (failFast) {
                throw new IllegalArgumentException("--fail-fast reads the input twice: give a file, not '-'");
            }
            return new BoundedLines(System.in, BoundedLines.MAX_LINE_BYTES);
        }
        return new BoundedLines(Files.newInputStream(file), BoundedLines.MAX_LINE_BYTES);
    }
}
