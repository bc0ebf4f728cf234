package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramLimits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * One of two senders is stopped (SIGSTOP of a separate JVM, as a long GC pause or a frozen VM would stop it) for longer
 * than the group's session timeout, then continued (SIGCONT). Meanwhile the other sender took its partitions and sent
 * what had no result. Found by trying it from outside: on resume the stopped sender's sending threads ran before its poll
 * loop learnt of the loss and sent messages it had been granted before the stop, which the other sender had sent
 * meanwhile (duplicates, and a chat's older message after its newer ones). Here: no message first sent during the stop
 * (by the other sender) reaches the provider again; duplicates are only the calls the stopped sender had on the wire
 * when it stopped (as after a kill -9), at most {@code sender.max.in.flight.per.bot}.
 *
 * <p>The window is the first ~100-250 ms after the resume, before the consumer learns of the loss, so this end-to-end
 * check catches it only sometimes (2 runs of the code before the fix on this machine did not; the outside trial's 70 s
 * stops of a `sluice dev` sender did, 3 of 3). The deterministic check of the mechanism is {@code BatchDecisionTest}
 * (nothing asked or sent while the lease is stale); this one guards the whole path across a real stop.
 */
class SenderPauseIT {
    private static final String BOT = "pause";
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("774000001");
    private static final int IN_FLIGHT_PER_BOT = 4;

    @Test
    void a_sender_stopped_past_its_session_timeout_sends_nothing_the_other_sender_sent_when_it_runs_again() throws Exception {
        String prefix = "pause";
        SenderIt.topics(prefix, 6);
        int count = 1200;
        try (FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram().withGlobalPerSecond(60))) {
            Map<String, String> base = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(), Map.of(BOT, TOKEN));
            base.put("budget.global.rate.per.s", "60");
            base.put("sender.max.in.flight.per.bot", Integer.toString(IN_FLIGHT_PER_BOT));
            base.put("kafka.session.timeout.ms", "6000");
            base.put("kafka.heartbeat.interval.ms", "1000");

            SenderIt.Child started = SenderIt.startChild(base, "pause-child");
            Process child = started.process();
            Path props = started.props();
            Path log = started.log();
            SenderService other = null;
            try (SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results")) {
                await().atMost(Duration.ofSeconds(30)).until(() -> Files.readString(log).contains("SENDER-STARTED"));
                Map<String, String> s = new HashMap<>(base);
                s.put("sender.instance.id", "pause-1");
                other = SenderIt.sender(s);
                other.start();
                List<OutboundMessage> msgs = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    msgs.add(SenderIt.message("q" + i, BOT, Integer.toString(41_000 + i % 300)).build());
                }
                SenderIt.produce(prefix + ".outbox.live", msgs);
                results.awaitUntil(r -> r.all.stream().filter(x -> "pause-child".equals(x.getSenderInstance()))
                        .count() >= 60, Duration.ofSeconds(60));
                signal(child, "STOP");
                long stoppedAt = System.currentTimeMillis();
                // past the session timeout: the other sender takes the child's partitions and sends from them
                long childBefore = childResults(results);
                java.util.Set<String> childChats;
                synchronized (results) {
                    childChats = results.all.stream().filter(x -> "pause-child".equals(x.getSenderInstance()))
                            .map(DeliveryResult::getChatId).collect(Collectors.toSet());
                }
                // the stop outlasts the 6 s session timeout: the other sender takes the child's partitions, sends from them
                results.awaitUntil(r -> System.currentTimeMillis() - stoppedAt >= 10_000 && r.all.stream()
                        .anyMatch(x -> "pause-1".equals(x.getSenderInstance()) && childChats.contains(x.getChatId())),
                        Duration.ofSeconds(60));
                signal(child, "CONT");
                long continuedAt = System.currentTimeMillis();
                System.out.printf("pause: child stopped %d ms with %d results written%n", continuedAt - stoppedAt, childBefore);

                Map<String, DeliveryResult> byId = results.awaitResults(count, Duration.ofSeconds(120));
                results.poll(Duration.ofSeconds(3)); // late sends and results, if any
                Map<String, List<FakeTelegramAccepted>> byText = telegram.accepted().stream()
                        .collect(Collectors.groupingBy(FakeTelegramAccepted::text));
                List<String> twice = byText.entrySet().stream().filter(e -> e.getValue().size() > 1).map(Map.Entry::getKey)
                        .sorted().toList();
                // a call on the wire at the stop reached the provider by then (its second send, by the other sender, can
                // come at any time after); one the stopped sender made after it ran again was first sent during the stop
                List<String> twiceAfterResume = byText.entrySet().stream().filter(e -> e.getValue().size() > 1
                        && e.getValue().get(0).acceptedAtMillis() > stoppedAt + 1_000)
                        .map(Map.Entry::getKey).sorted().toList();
                byText.forEach((text, calls) -> {
                    if (calls.size() > 1) {
                        System.out.printf("pause: %s accepted at %s ms after the stop (resumed at %d)%n", text,
                                calls.stream().map(a -> a.acceptedAtMillis() - stoppedAt).toList(), continuedAt - stoppedAt);
                    }
                });
                Map<String, Long> perId = results.all.stream()
                        .collect(Collectors.groupingBy(DeliveryResult::getMessageId, Collectors.counting()));
                long idsWithTwoResults = perId.values().stream().filter(n -> n > 1).count();
                System.out.printf("pause: %d accepted, sent twice %s, of them first sent during the stop %s, %d ids with "
                        + "two results%n", telegram.accepted().size(), twice, twiceAfterResume, idsWithTwoResults);
                List<String> notAccepted = byId.values().stream()
                        .filter(r -> !byText.containsKey("msg " + r.getMessageId()))
                        .map(r -> r.getMessageId() + " " + r.getStatus() + " by " + r.getSenderInstance() + ": "
                                + r.getReason())
                        .sorted().toList();
                if (!notAccepted.isEmpty()) {
                    Path kept = Path.of("target", "SenderPauseIT-child-" + System.currentTimeMillis() + ".log");
                    Files.copy(log, kept);
                    System.out.printf("pause: results of messages the provider never accepted %s (child log: %s)%n",
                            notAccepted, kept.toAbsolutePath());
                }
                assertThat(byId).hasSize(count);
                assertThat(notAccepted).as("a result for a message the provider never accepted").isEmpty();
                assertThat(byText).as("every message reached the provider").hasSize(count);
                assertThat(twiceAfterResume).as("sent during the stop by the other sender, then again by the stopped one").isEmpty();
                assertThat(twice).as("duplicates: the calls on the wire at the stop").hasSizeLessThanOrEqualTo(IN_FLIGHT_PER_BOT);
                assertThat(idsWithTwoResults).isLessThanOrEqualTo(IN_FLIGHT_PER_BOT);
            } finally {
                child.destroyForcibly();
                if (other != null) {
                    other.close();
                }
                Files.deleteIfExists(props);
            }
        }
    }

    private static long childResults(SenderIt.Results results) {
        synchronized (results) {
            return results.all.stream().filter(x -> "pause-child".equals(x.getSenderInstance())).count();
        }
    }

    /** kill -STOP / -CONT of the child, by its PID. */
    private static void signal(Process child, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(child.pid())).inheritIO().start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(kill.exitValue()).as("kill -%s %d", signal, child.pid()).isZero();
    }
}
