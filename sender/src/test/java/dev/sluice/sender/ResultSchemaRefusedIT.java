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
 * Issue 15 / finding F2: the registry refuses the result schema (HTTP 403, as for read-only credentials) for
 * 30 s while the provider accepts 5 messages. Each is accepted exactly once (the result write is retried, never
 * the provider call), the 5 results land once the registry lets the schema in, and 10 more messages deliver at
 * once afterwards (no bot slot or breaker permit leaked).
 */
class ResultSchemaRefusedIT {
    private static final String BOT = "refused";
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("720000001");

    @Test
    void a_refused_result_schema_retries_the_result_write_alone_and_never_the_provider_call() throws Exception {
        String prefix = "resultref";
        SenderIt.topics(prefix, 2);
        try (InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();
             FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram().withGlobalPerSecond(200))) {
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(), Map.of(BOT, TOKEN));
            s.put("schema.registry.url", registry.url());
            s.put("budget.global.rate.per.s", "100");
            String resultSubject = prefix + ".delivery.results-value";
            registry.injectFaults((method, path) -> path.contains(resultSubject) ? 403 : null);
            long refusedUntil = System.currentTimeMillis() + 30_000;
            try (SenderService sender = SenderIt.sender(s);
                 SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results", registry.url())) {
                sender.start();
                SenderIt.produce(prefix + ".outbox.live", batch("first", 5, 50_000), registry.url());
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
                        .until(() -> telegram.accepted().size() >= 5);
                // the rest of the 30 s: the results cannot be written, the messages are not sent again
                await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofMillis(200))
                        .until(() -> System.currentTimeMillis() >= refusedUntil);
                results.poll(Duration.ofMillis(200));
                assertThat(results.all).as("results while the schema is refused").isEmpty();
                assertOncePerChat(telegram, 5);
                registry.clearFaults();

                Map<String, DeliveryResult> byId = results.awaitResults(5, Duration.ofSeconds(30));
                assertThat(byId.values()).hasSize(5).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                assertOncePerChat(telegram, 5);

                long before = System.currentTimeMillis();
                SenderIt.produce(prefix + ".outbox.live", batch("then", 10, 51_000), registry.url());
                results.awaitResults(15, Duration.ofSeconds(10));
                long took = System.currentTimeMillis() - before;
                System.out.printf("result schema refused: 5 accepted once each, 10 more delivered in %d ms%n", took);
                assertThat(took).as("10 more deliver at once").isLessThan(5_000);
                assertThat(results.all).as("one result each").hasSize(15);
                assertThat(results.byId.values()).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                assertOncePerChat(telegram, 15);
            }
        }
    }

    private static List<OutboundMessage> batch(String idPrefix, int n, int firstChat) {
        List<OutboundMessage> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(SenderIt.message(idPrefix + i, BOT, Integer.toString(firstChat + i))
                    .setEventClass(NotificationClass.CRITICAL).build());
        }
        return out;
    }

    private static void assertOncePerChat(FakeTelegram telegram, int chats) {
        Map<String, Long> perChat = telegram.accepted().stream()
                .collect(Collectors.groupingBy(FakeTelegramAccepted::chatId, Collectors.counting()));
        assertThat(perChat).as("accepted by the provider exactly once each").hasSize(chats)
                .allSatisfy((chat, n) -> assertThat(n).isEqualTo(1L));
    }
}
