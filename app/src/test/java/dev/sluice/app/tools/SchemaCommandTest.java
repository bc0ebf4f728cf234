package dev.sluice.app.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.Notification;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code sluice schema}: each schema printed parses alone (a fresh parser, no other .avsc) into the schema the code uses. */
class SchemaCommandTest {
    private record Run(int exit, String out, String err) {
    }

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = new CommandLine(new SchemaCommand()).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true)).execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void oneNamePrintsPureJsonThatParsesAloneWithItsNamedTypesInlined() {
        Run r = run("notification");
        assertThat(r.exit()).isZero();
        Schema parsed = new Schema.Parser().parse(r.out());
        assertThat(parsed).isEqualTo(Notification.getClassSchema());
        assertThat(r.out()).contains("\"name\" : \"NotificationClass\"").contains("\"symbols\" : [ \"CRITICAL\"");

        Schema result = new Schema.Parser().parse(run("DeliveryResult", "--compact").out());
        assertThat(result).isEqualTo(DeliveryResult.getClassSchema());
        assertThat(result.getField("status").schema().getEnumSymbols()).contains("DELIVERED", "EXPIRED");
    }

    @Test
    void everyTopicSchemaWithItsTopicsAndSubjects() {
        Run r = run();
        assertThat(r.exit()).isZero();
        assertThat(r.out().lines().filter(l -> l.startsWith("# ")).toList()).containsExactly(
                "# Notification (topics: notifications, notifications.backfill; registry subjects: notifications-value, notifications.backfill-value)",
                "# DeliveryResult (topics: delivery.results, delivery.parts; registry subjects: delivery.results-value, delivery.parts-value)",
                "# ChatEvent (topics: chat.events; registry subjects: chat.events-value)",
                "# Preference (topics: preferences; registry subjects: preferences-value)",
                "# OutboundMessage (topics: outbox.live, outbox.backfill; registry subjects: outbox.live-value, outbox.backfill-value)",
                "# SenderStatus (topics: sender.status; registry subjects: sender.status-value)");
    }

    @Test
    void outWritesOneSelfContainedFilePerSchema(@TempDir Path dir) throws Exception {
        Run r = run("--out", dir.toString(), "--internal");
        assertThat(r.exit()).isZero();
        List<Path> files;
        try (var list = Files.list(dir)) {
            files = list.sorted().toList();
        }
        assertThat(files).extracting(p -> p.getFileName().toString()).containsExactly("ChatEvent.avsc", "ChatStatus.avsc",
                "DeliveryResult.avsc", "DigestEntry.avsc", "Notification.avsc", "OutboundMessage.avsc", "Preference.avsc", "SenderStatus.avsc");
        for (Path f : files) {
            Schema s = new Schema.Parser().parse(f.toFile()); // a fresh parser per file: nothing defined elsewhere
            assertThat(s.getName() + ".avsc").isEqualTo(f.getFileName().toString());
        }
    }

    @Test
    void anUnknownNameIsAUsageError() {
        Run r = run("Notifications");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("schema 'Notifications': not one of Notification, DeliveryResult");
    }
}
