package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramLimits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Issue 15 / finding F3: {@code delivery.results} is unwritable for longer than the result producer's
 * {@code delivery.timeout.ms} (3 s here). The topic is deleted while the sender runs and created again 8 s later:
 * the producer's batches expire (an asynchronous failure) and new writes find no topic. {@code min.insync.replicas=2}
 * on the one-broker topic does not do it on Kafka 4.4: the broker caps it at the replication factor (KIP-966). The
 * running sender writes the results again itself: every result lands without a restart, each message reached the
 * provider once, and the group's lag returns to 0.
 */
class ResultsUnwritableIT {
    private static final String BOT = "unwritable";
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("730000001");

    @Test
    void results_that_fail_after_the_delivery_timeout_are_written_by_the_running_sender_and_the_commit_moves_on()
            throws Exception {
        String prefix = "unwritable";
        SenderIt.topics(prefix, 3);
        int count = 12;
        String resultsTopic = prefix + ".delivery.results";
        try (FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram().withGlobalPerSecond(200))) {
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(), Map.of(BOT, TOKEN));
            s.put("budget.global.rate.per.s", "100");
            s.put("kafka.delivery.timeout.ms", "3000");
            s.put("kafka.request.timeout.ms", "1000");
            s.put("kafka.max.block.ms", "2000");
            List<OutboundMessage> msgs = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                msgs.add(SenderIt.message("u" + i, BOT, Integer.toString(60_000 + i)).build());
            }
            try (SenderService sender = SenderIt.sender(s)) {
                sender.start();
                // one result written first: the result producer knows the topic when it goes away
                SenderIt.produce(prefix + ".outbox.live", List.of(SenderIt.message("first", BOT, "59999").build()));
                try (SenderIt.Results first = new SenderIt.Results(resultsTopic)) {
                    first.awaitResults(1, Duration.ofSeconds(20));
                }
                SenderIt.kafka().admin().deleteTopics(List.of(resultsTopic)).all().get(10, TimeUnit.SECONDS);
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
                        .until(() -> !SenderIt.kafka().admin().listTopics().names().get().contains(resultsTopic));
                SenderIt.produce(prefix + ".outbox.live", msgs);
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
                        .until(() -> telegram.accepted().size() >= count + 1);
                // unwritable for longer than delivery.timeout.ms (3 s): the producer gave up on those writes
                long unwritableUntil = System.currentTimeMillis() + 8_000;
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
                        .until(() -> System.currentTimeMillis() >= unwritableUntil);
                assertThat(Lag.of(SenderIt.kafka(), prefix + "-group", prefix + ".outbox.live"))
                        .as("the commit waits for the results").isEqualTo(count);
                SenderIt.kafka().createTopics(3, resultsTopic);
                TopicsReady.await(SenderIt.kafka(), resultsTopic);

                long recovered = System.currentTimeMillis();
                try (SenderIt.Results results = new SenderIt.Results(resultsTopic)) {
                    Map<String, DeliveryResult> byId = results.awaitResults(count, Duration.ofSeconds(60));
                    assertThat(byId.values()).hasSize(count).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                    assertThat(results.all).as("one result each, no restart").hasSize(count);
                }
                Map<String, Long> perChat = telegram.accepted().stream()
                        .collect(Collectors.groupingBy(FakeTelegramAccepted::chatId, Collectors.counting()));
                assertThat(perChat).hasSize(count + 1).allSatisfy((chat, n) -> assertThat(n).isEqualTo(1L));
                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                        .until(() -> Lag.of(SenderIt.kafka(), prefix + "-group", prefix + ".outbox.live") == 0);
                assertThat(Meters.sum(sender, "sluice.results.write.failed")).as("failed result writes counted")
                        .isGreaterThanOrEqualTo(count);
                System.out.printf("results unwritable: all %d results and lag 0 %d ms after recovery; %d failed writes%n",
                        count, System.currentTimeMillis() - recovered, Meters.sum(sender, "sluice.results.write.failed"));
            }
        }
    }
}
