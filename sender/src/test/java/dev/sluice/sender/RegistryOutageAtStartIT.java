package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.NotificationClass;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramAccepted;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.InProcessSchemaRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Issue 15 / finding F1: 20 notifications wait in the outbox; a sender starts while the schema registry is
 * unreachable (connections dropped unanswered); the registry comes back after 30 s. Every one of the 20 is
 * DELIVERED exactly once, nothing is skipped, nothing goes to the sender's dead-letter topic, and the group's
 * committed offsets reach the end of the outbox.
 */
class RegistryOutageAtStartIT {
    private static final String BOT = "outage";
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("710000001");

    @Test
    void records_unreadable_while_the_registry_is_down_are_read_again_when_it_is_back_none_skipped() throws Exception {
        String prefix = "regdown";
        SenderIt.topics(prefix, 4);
        int count = 20;
        try (InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();
             FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram().withGlobalPerSecond(200))) {
            List<OutboundMessage> msgs = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                msgs.add(SenderIt.message("r" + i, BOT, Integer.toString(40_000 + i))
                        .setEventClass(NotificationClass.CRITICAL).build());
            }
            // the topology wrote them while the registry was up (its serializer registered the schema)
            SenderIt.produce(prefix + ".outbox.live", msgs, registry.url());

            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(), Map.of(BOT, TOKEN));
            s.put("schema.registry.url", registry.url());
            s.put("schema.registry.retry.max.ms", "2000");
            s.put("budget.global.rate.per.s", "100");
            registry.injectFaults((method, path) -> InProcessSchemaRegistry.UNREACHABLE);
            try (SenderService sender = SenderIt.sender(s);
                 SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results", registry.url())) {
                sender.start();
                long outageEndsAt = System.currentTimeMillis() + 30_000;
                // during the outage: nothing can be read, so nothing is sent and nothing is written
                await().atMost(Duration.ofSeconds(40)).pollDelay(Duration.ofSeconds(30)).until(() -> true);
                assertThat(telegram.accepted()).as("sent while the registry was down").isEmpty();
                results.poll(Duration.ofMillis(200));
                assertThat(results.all).as("results while the registry was down").isEmpty();
                assertThat(System.currentTimeMillis()).isGreaterThanOrEqualTo(outageEndsAt);
                registry.clearFaults();

                Map<String, DeliveryResult> byId = results.awaitResults(count, Duration.ofSeconds(60));
                assertThat(byId.keySet()).as("every waiting notification has its result").hasSize(count);
                assertThat(byId.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                assertThat(results.all).as("exactly one result each").hasSize(count);
                Map<String, Long> perChat = telegram.accepted().stream()
                        .collect(Collectors.groupingBy(FakeTelegramAccepted::chatId, Collectors.counting()));
                assertThat(perChat).as("accepted by the provider exactly once each").hasSize(count)
                        .allSatisfy((chat, n) -> assertThat(n).isEqualTo(1L));
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
                        .until(() -> Lag.of(SenderIt.kafka(), prefix + "-group", prefix + ".outbox.live") == 0);
            }
            assertThat(Lag.records(SenderIt.kafka(), prefix + ".outbox.dlq")).as("dead-lettered").isZero();
        }
    }
}
