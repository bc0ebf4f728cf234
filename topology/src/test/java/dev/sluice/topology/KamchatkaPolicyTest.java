package dev.sluice.topology;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.Notification;
import dev.sluice.avro.OutboundMessage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real USGS extract of the burst after the M8.8 Kamchatka earthquake (196 M≥5 events, 2025-07-29 23:00 to
 * 07-31) sent to one subscriber whose policy is 5 per hour with a burst of 5. The wall clock follows the event
 * times, so the GCRA, the flushes and due_at run on the catalogue's clock.
 */
class KamchatkaPolicyTest {
    static final Path CSV = Path.of("..", "data", "usgs", "kamchatka_2025-07-29T23_to_2025-07-31_m5.csv");
    private static final long HOUR_MS = 3_600_000L;

    @TempDir
    Path stateDir;

    record Quake(Instant time, String magnitude, String place, String id) {
    }

    /** A small CSV reader for this file: comma-separated, a field may be double-quoted (the 3rd, place). */
    static List<Quake> read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        List<Quake> out = new ArrayList<>();
        for (String line : lines.subList(1, lines.size())) {
            if (line.isBlank()) {
                continue;
            }
            List<String> f = fields(line);
            out.add(new Quake(Instant.parse(f.get(0)), f.get(1), f.get(2), f.get(3)));
        }
        return out;
    }

    static List<String> fields(String line) {
        List<String> f = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                    cur.append('"');
                    i++;
                } else if (c == '"') {
                    quoted = false;
                } else {
                    cur.append(c);
                }
            } else if (c == '"') {
                quoted = true;
            } else if (c == ',') {
                f.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        f.add(cur.toString());
        return f;
    }

    @Test
    void readsTheQuotedPlaceColumn() throws IOException {
        List<Quake> quakes = read(CSV);
        assertThat(quakes).hasSize(196);
        assertThat(quakes.get(1)).isEqualTo(new Quake(Instant.parse("2025-07-29T23:24:52.483Z"), "8.8",
                "2025 Kamchatka Peninsula, Russia Earthquake", "us6000qw60"));
    }

    @Test
    void atMostFivePlusFivePerHourIndividualMessagesPassInAnyWindowAndTheRestArriveInDigests() throws IOException {
        List<Quake> quakes = read(CSV);
        Instant start = quakes.get(0).time().minusSeconds(1);
        List<OutboundMessage> out = new ArrayList<>();
        try (Harness h = new Harness(stateDir, start, Map.of("policy.chat.rate", "5/h", "policy.chat.burst", "5"))) {
            for (Quake q : quakes) {
                h.advanceTo(q.time(), Duration.ofSeconds(60));
                h.send(Notification.newBuilder().setId(q.id()).setBotId("quakes").setChatId("777").setKind("quake.m5")
                        .setText("M" + q.magnitude() + " " + q.place() + " at " + q.time()).setCreatedAt(q.time())
                        .setAttributes(Map.of("magnitude", q.magnitude())).build());
                out.addAll(h.drainLive());
            }
            h.advance(Duration.ofMinutes(2), Duration.ofSeconds(30));
            out.addAll(h.drainLive());
            assertThat(h.resultsOut.isEmpty()).isTrue();
        }

        List<Long> individual = out.stream().filter(m -> m.getDigestCount() == 0).map(m -> m.getDueAt().toEpochMilli()).sorted().toList();
        List<OutboundMessage> digests = out.stream().filter(m -> m.getDigestCount() > 0).toList();
        // GCRA promise: in any window [t_i, t_j] at most 5 + 5·T/h individual messages.
        for (int i = 0; i < individual.size(); i++) {
            for (int j = i; j < individual.size(); j++) {
                long t = individual.get(j) - individual.get(i);
                assertThat((double) (j - i + 1)).as("messages %d..%d within %d ms", i, j, t)
                        .isLessThanOrEqualTo(5 + 5.0 * t / HOUR_MS);
            }
        }
        assertThat(digests).isNotEmpty();
        // Digests to this chat are messages under the same policy, so all messages together keep the bound
        // (no entry reached digest.max.folded.ids, the only flush that may exceed it).
        List<Long> all = out.stream().map(m -> m.getDueAt().toEpochMilli()).sorted().toList();
        for (int i = 0; i < all.size(); i++) {
            for (int j = i; j < all.size(); j++) {
                long t = all.get(j) - all.get(i);
                assertThat((double) (j - i + 1)).as("all messages %d..%d within %d ms", i, j, t).isLessThanOrEqualTo(5 + 5.0 * t / HOUR_MS);
            }
        }
        List<String> fates = new ArrayList<>();
        out.forEach(m -> {
            if (m.getDigestCount() == 0) {
                fates.add(m.getId());
            } else {
                assertThat(m.getFoldedIds()).hasSize(m.getDigestCount());
                fates.addAll(m.getFoldedIds());
            }
        });
        Map<String, Long> times = fates.stream().collect(Collectors.groupingBy(Function.identity(), HashMap::new, Collectors.counting()));
        assertThat(times.values()).as("no id twice").allMatch(c -> c == 1);
        assertThat(times.keySet()).as("nothing lost").containsExactlyInAnyOrderElementsOf(quakes.stream().map(Quake::id).toList());
        System.out.printf("kamchatka: %d quakes -> %d individual messages, %d digests folding %d%n", quakes.size(),
                individual.size(), digests.size(), digests.stream().mapToInt(OutboundMessage::getDigestCount).sum());
    }
}
