package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.testkit.FakeTelegram;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;

/**
 * Issue 15 / finding F3: {@code delivery.results} is unwritable for longer than the result producer's
 * {@code delivery.timeout.ms} ({@code min.insync.replicas=2} on the one-broker topic: every acks=all write is
 * refused with NOT_ENOUGH_REPLICAS until the producer gives up). The running sender retries the results itself:
 * every result lands without a restart, each message reached the provider once, and the group's lag returns to 0.
 */
class ResultsUnwritableIT {
    private static final String BOT = "unwritable";
    private static final String TOKEN = "730000001:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw";

    @Test
    void results_that_fail_after_the_delivery_timeout_are_written_by_the_running_sender_and_the_commit_moves_on()
            throws Exception {
        String prefix = "unwritable";
        SenderIt.topics(prefix, 3);
        int count = 12;
        String resultsTopic = prefix + ".delivery.results";
        try (FakeTelegram telegram = FakeTelegram.start(FakeTelegram.Limits.telegram().withGlobalPerSecond(200))) {
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(), Map.of(BOT, TOKEN));
            s.put("budget.global.rate.per.s", "100");
            s.put("kafka.delivery.timeout.ms", "3000");
            s.put("kafka.request.timeout.ms", "1000");
            List<OutboundMessage> msgs = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                msgs.add(SenderIt.message("u" + i, BOT, Integer.toString(60_000 + i)).build());
            }
            try (SenderService sender = SenderIt.sender(s);
                 SenderIt.Results results = new SenderIt.Results(resultsTopic)) {
                sender.start();
                minInsyncReplicas(resultsTopic, "2");
                SenderIt.produce(prefix + ".outbox.live", msgs);
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
                        .until(() -> telegram.accepted().size() >= count);
                // longer than delivery.timeout.ms (3 s): the producer gave up on the first writes
                long unwritableUntil = System.currentTimeMillis() + 8_000;
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
                        .until(() -> System.currentTimeMillis() >= unwritableUntil);
                results.poll(Duration.ofMillis(200));
                assertThat(results.all).as("results while the topic is unwritable").isEmpty();
                minInsyncReplicas(resultsTopic, null);

                long recovered = System.currentTimeMillis();
                Map<String, DeliveryResult> byId = results.awaitResults(count, Duration.ofSeconds(60));
                assertThat(byId.values()).hasSize(count).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                assertThat(results.all).as("one result each").hasSize(count);
                Map<String, Long> perChat = telegram.accepted().stream()
                        .collect(Collectors.groupingBy(FakeTelegram.Accepted::chatId, Collectors.counting()));
                assertThat(perChat).hasSize(count).allSatisfy((chat, n) -> assertThat(n).isEqualTo(1L));
                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                        .until(() -> Lag.of(SenderIt.kafka(), prefix + "-group", prefix + ".outbox.live") == 0);
                System.out.printf("results unwritable: all %d results and lag 0 %d ms after recovery%n", count,
                        System.currentTimeMillis() - recovered);
                assertThat(Meters.sum(sender, "sluice.results.write.failed")).as("failed result writes counted")
                        .isPositive();
            }
        }
    }

    /** Sets (or with null removes) the topic's {@code min.insync.replicas}. */
    private static void minInsyncReplicas(String topic, String value) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        ConfigEntry entry = new ConfigEntry("min.insync.replicas", value);
        AlterConfigOp op = new AlterConfigOp(entry, value == null ? AlterConfigOp.OpType.DELETE : AlterConfigOp.OpType.SET);
        Map<ConfigResource, Collection<AlterConfigOp>> ops = Map.of(resource, List.of(op));
        SenderIt.kafka().admin().incrementalAlterConfigs(ops).all().get(10, TimeUnit.SECONDS);
    }
}
