package dev.sluice.app.tools;

import dev.sluice.avro.ChatEvent;
import dev.sluice.avro.ChatStatus;
import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DigestEntry;
import dev.sluice.avro.Notification;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.avro.Preference;
import dev.sluice.avro.SenderStatus;
import dev.sluice.config.Topics;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.apache.avro.Schema;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code sluice schema}: the Avro schemas of Sluice's topics as self-contained JSON, for producers and consumers in
 * other languages. Each schema is fully resolved: every named type it uses (enums, nested records) is defined inline
 * at its first use, so the text parses alone, without the other {@code .avsc} files. Names the topics and the
 * registry subject (TopicNameStrategy: {@code <topic>-value}) of each. Stateless; runs on the caller's thread.
 */
@Command(name = "schema", mixinStandardHelpOptions = true,
        description = {"Print the Avro schemas of Sluice's topics as self-contained JSON (named types inlined), for producers in other languages.",
                "E.g. sluice schema Notification > Notification.avsc, or sluice schema --out schemas/ for every one."})
public final class SchemaCommand implements Callable<Integer> {

    /** A record written to topics, with the topics' config keys' defaults. */
    record Entry(Schema schema, List<String> topics, boolean internal) {
        String name() {
            return schema.getName();
        }

        String subjects() {
            return topics.isEmpty() ? "(none: a state store's value)" : topics.stream().map(t -> t + "-value").collect(Collectors.joining(", "));
        }
    }

    @Parameters(arity = "0..*", paramLabel = "NAME", description = "Record names (Notification, DeliveryResult, ...; any case). Default: every one on a topic.")
    List<String> names = new ArrayList<>();

    @Option(names = "--out", paramLabel = "DIR", description = "Write <Name>.avsc files there instead of printing.")
    Path out;

    @Option(names = "--internal", description = "Also the topology's state-store records (ChatStatus, DigestEntry).")
    boolean internal;

    @Option(names = "--compact", description = "One line per schema instead of indented JSON.")
    boolean compact;

    @Spec
    CommandSpec spec;

    static List<Entry> entries() {
        Topics t = Topics.defaults();
        return List.of(
                new Entry(Notification.getClassSchema(), List.of(t.notifications(), t.notificationsBackfill()), false),
                new Entry(DeliveryResult.getClassSchema(), List.of(t.deliveryResults(), t.deliveryParts()), false),
                new Entry(ChatEvent.getClassSchema(), List.of(t.chatEvents()), false),
                new Entry(Preference.getClassSchema(), List.of(t.preferences()), false),
                new Entry(OutboundMessage.getClassSchema(), List.of(t.outboxLive(), t.outboxBackfill()), false),
                new Entry(SenderStatus.getClassSchema(), List.of(t.senderStatus()), false),
                new Entry(ChatStatus.getClassSchema(), List.of(), true),
                new Entry(DigestEntry.getClassSchema(), List.of(), true));
    }

    /** The schema as one self-contained JSON text: named types inlined at their first use. */
    static String resolved(Schema schema, boolean pretty) {
        return schema.toString(pretty);
    }

    @Override
    public Integer call() throws IOException {
        PrintWriter o = spec.commandLine().getOut();
        List<Entry> chosen = choose();
        if (out != null) {
            if (Files.exists(out) && !Files.isDirectory(out)) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--out " + out
                        + ": exists and is not a directory (expected a directory for the <Name>.avsc files)");
            }
            Files.createDirectories(out);
            for (Entry e : chosen) {
                Path file = out.resolve(e.name() + ".avsc");
                Files.writeString(file, resolved(e.schema(), !compact) + System.lineSeparator());
                o.printf("%s -> %s (topics: %s; subjects: %s)%n", e.name(), file, e.topics().isEmpty() ? "none" : String.join(", ", e.topics()), e.subjects());
            }
        } else if (chosen.size() == 1) {
            o.println(resolved(chosen.get(0).schema(), !compact)); // pure JSON: redirect it into a .avsc file
        } else {
            for (Entry e : chosen) {
                o.printf("# %s (topics: %s; registry subjects: %s)%n", e.name(), e.topics().isEmpty() ? "none" : String.join(", ", e.topics()), e.subjects());
                o.println(resolved(e.schema(), !compact));
            }
        }
        o.flush();
        return 0;
    }

    private List<Entry> choose() {
        List<Entry> all = entries();
        if (names.isEmpty()) {
            return all.stream().filter(e -> internal || !e.internal()).toList();
        }
        List<Entry> chosen = new ArrayList<>();
        for (String n : names) {
            Entry e = all.stream().filter(x -> x.name().equalsIgnoreCase(n.trim())).findFirst().orElseThrow(() ->
                    new ParameterException(spec.commandLine(), "schema '" + n + "': not one of "
                            + all.stream().map(Entry::name).collect(Collectors.joining(", "))));
            chosen.add(e);
        }
        return chosen;
    }
}
