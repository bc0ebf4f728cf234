package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
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
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * One of three senders is killed mid-run ({@code kill -9} of a separate JVM through its Process handle): every
 * message still ends with exactly one result, and FakeTelegram sees no more duplicates than the killed sender
 * had calls in flight ({@code sender.max.in.flight.per.bot}). The idempotency keys in Redis stop the new owners
 * from resending what the killed sender delivered after its last offset commit, and a key left at "sent" makes the
 * new owner look for the result on {@code delivery.results} before writing one.
 */
class SenderCrashIT {
    private static final String BOT = "crash";
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("720000001");
    private static final int IN_FLIGHT_PER_BOT = 4;

    @Test
    void a_sender_killed_mid_run_leaves_every_message_with_exactly_one_result_and_few_duplicates() throws Exception {
        String prefix = "crash";
        SenderIt.topics(prefix, 6);
        int count = 600;
        try (FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram().withGlobalPerSecond(60))) {
            Map<String, String> base = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(), Map.of(BOT, TOKEN));
            base.put("budget.global.rate.per.s", "60");
            base.put("sender.max.in.flight.per.bot", Integer.toString(IN_FLIGHT_PER_BOT));
            base.put("sender.commit.interval.ms", "2000"); // a crash loses up to 2 s of commits: redelivery happens
            base.put("kafka.session.timeout.ms", "6000");
            base.put("kafka.heartbeat.interval.ms", "1000");

            SenderIt.Child started = SenderIt.startChild(base, "crash-child");
            Process child = started.process();
            Path props = started.props();
            Path log = started.log();
            List<SenderService> senders = new ArrayList<>();
            try (SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results")) {
                await().atMost(Duration.ofSeconds(30)).until(() -> Files.readString(log).contains("SENDER-STARTED"));
                for (int i = 1; i <= 2; i++) {
                    Map<String, String> s = new HashMap<>(base);
                    s.put("sender.instance.id", "crash-" + i);
                    SenderService sender = SenderIt.sender(s);
                    senders.add(sender);
                    sender.start();
                }
                List<OutboundMessage> msgs = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    msgs.add(SenderIt.message("k" + i, BOT, Integer.toString(40_000 + i)).build());
                }
                SenderIt.produce(prefix + ".outbox.live", msgs);
                // kill -9 once the child is busy sending
                results.awaitUntil(r -> r.all.stream().filter(x -> "crash-child".equals(x.getSenderInstance()))
                        .count() >= 40, Duration.ofSeconds(60));
                child.destroyForcibly().waitFor();
                long childResults = results.all.stream().filter(x -> "crash-child".equals(x.getSenderInstance())).count();

                Map<String, DeliveryResult> byId = results.awaitResults(count, Duration.ofSeconds(90));
                results.poll(Duration.ofSeconds(2)); // late duplicates, if any
                Map<String, Long> perId = results.all.stream()
                        .collect(Collectors.groupingBy(DeliveryResult::getMessageId, Collectors.counting()));
                List<String> texts = telegram.accepted().stream().map(FakeTelegramAccepted::text).toList();
                long duplicates = texts.size() - texts.stream().distinct().count();
                System.out.printf("crash: child wrote %d results before kill -9; %d results for %d messages, "
                                + "%d accepted by FakeTelegram, %d duplicates (bound %d), %d skipped as already done%n",
                        childResults, results.all.size(), count, texts.size(), duplicates, IN_FLIGHT_PER_BOT,
                        senders.stream().mapToLong(SenderService::skippedAlreadyDone).sum());
                assertThat(byId).hasSize(count);
                assertThat(perId.values()).as("exactly one result per message").allMatch(n -> n == 1);
                assertThat(byId.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                assertThat(texts.stream().distinct().count()).as("every message reached the provider").isEqualTo(count);
                assertThat(duplicates).as("duplicates at the provider").isLessThanOrEqualTo(IN_FLIGHT_PER_BOT);
                assertThat(byId.values().stream().map(DeliveryResult::getSenderInstance).distinct())
                        .as("the survivors took over").contains("crash-1", "crash-2");
            } finally {
                child.destroyForcibly();
                senders.forEach(SenderService::close);
                Files.deleteIfExists(props);
            }
        }
    }
}
