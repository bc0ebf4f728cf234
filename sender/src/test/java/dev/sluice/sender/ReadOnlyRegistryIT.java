package dev.sluice.sender;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.avro.DeliveryResult;
import dev.sluice.avro.DeliveryStatus;
import dev.sluice.avro.OutboundMessage;
import dev.sluice.avro.SenderStatus;
import dev.sluice.schemas.CachedSchemaRegistryClient;
import dev.sluice.testkit.FakeTelegram;
import dev.sluice.testkit.FakeTelegramLimits;
import dev.sluice.testkit.InProcessSchemaRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 15, item 5: registry credentials that may only read. The deploy step registered the schemas; the registry
 * refuses every registration (403). With {@code schema.registry.auto.register=false} the sender looks its schemas
 * up ({@code POST /subjects/{s}}) and delivers with one result each, without a single registration attempt.
 */
class ReadOnlyRegistryIT {
    private static final String BOT = "readonly";
    private static final String TOKEN = dev.sluice.testkit.FakeTokens.of("770000001");

    @Test
    void with_lookup_only_a_sender_delivers_and_writes_results_under_read_only_credentials() throws Exception {
        String prefix = "readonly";
        SenderIt.topics(prefix, 2);
        int count = 6;
        try (InProcessSchemaRegistry registry = InProcessSchemaRegistry.start();
             FakeTelegram telegram = FakeTelegram.start(FakeTelegramLimits.telegram().withGlobalPerSecond(200))) {
            // the deploy step (write access) registers what the topology and the senders write
            CachedSchemaRegistryClient deploy = new CachedSchemaRegistryClient(registry.url());
            deploy.register(prefix + ".outbox.live-value", OutboundMessage.getClassSchema());
            deploy.register(prefix + ".delivery.results-value", DeliveryResult.getClassSchema());
            deploy.register(prefix + ".sender.status-value", SenderStatus.getClassSchema());
            List<OutboundMessage> msgs = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                msgs.add(SenderIt.message("ro" + i, BOT, Integer.toString(95_000 + i)).build());
            }
            SenderIt.produce(prefix + ".outbox.live", msgs, registry.url());
            AtomicInteger registrations = new AtomicInteger();
            registry.injectFaults((method, path) -> {
                if (method.equals("POST") && path.endsWith("/versions")) {
                    registrations.incrementAndGet();
                    return 403;
                }
                return null;
            });
            Map<String, String> s = SenderIt.settings(prefix, prefix + "-group", telegram.apiUrl(), Map.of(BOT, TOKEN));
            s.put("schema.registry.url", registry.url());
            s.put("schema.registry.auto.register", "false");
            s.put("sender.status.interval.ms", "200");
            try (SenderService sender = SenderIt.sender(s);
                 SenderIt.Results results = new SenderIt.Results(prefix + ".delivery.results", registry.url())) {
                sender.start();
                Map<String, DeliveryResult> byId = results.awaitResults(count, Duration.ofSeconds(30));
                assertThat(byId.values()).hasSize(count).allMatch(r -> r.getStatus() == DeliveryStatus.DELIVERED);
                assertThat(results.all).hasSize(count);
                assertThat(Meters.sum(sender, "sluice.results.write.failed")).isZero();
            }
            assertThat(registrations.get()).as("registration attempts").isZero();
        }
    }
}
